"""Domain errors raised by actions and selectors of every app.

One exception handler (config/api.py) maps them to HTTP statuses and the JSON error body
`{"error": {"code": ..., "message": ...}}`; views and commands map them likewise. Keeping
them here, in the lowest app, lets every app raise them without importing upward.
"""

from __future__ import annotations


class DomainError(Exception):
    status = 400
    code = "bad_request"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class NotFound(DomainError):
    """Missing, or belonging to another workspace: the two are indistinguishable on purpose."""

    status = 404
    code = "not_found"


class PermissionDenied(DomainError):
    status = 403
    code = "forbidden"


class Conflict(DomainError):
    status = 409
    code = "conflict"


class InvalidInput(DomainError):
    status = 422
    code = "invalid"


class PayloadTooLarge(DomainError):
    status = 413
    code = "too_large"


class UnsupportedMediaType(DomainError):
    status = 415
    code = "unsupported_media_type"
