"""The JSON API at /api/v1/ (OpenAPI docs at /api/v1/docs) and its one error mapping.

Every error answers `{"error": {"code": ..., "message": ...}}` (validation errors add
`details`), so clients handle one shape. Domain errors from any app map here and nowhere
else.
"""

from __future__ import annotations

import logging
import sys

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import DataError
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, AuthorizationError, HttpError, ValidationError
from ninja.operation import Operation

from explorer.layout_api import router as explorer_layout_router
from ingest.api import router as ingest_router
from knowledge.api import archive_router as knowledge_archive_router
from knowledge.api import router as knowledge_router
from knowledge.graph.base import GraphBackendError
from system.api import router as system_router
from workspaces.api import router as workspaces_router
from workspaces.auth import SessionAuth, TokenAuth
from workspaces.errors import DomainError

logger = logging.getLogger(__name__)


class GraphloomApi(NinjaAPI):
    """Operation ids are a contract (clients generate code from them): a module of views
    may pin the prefix its ids had (`OPERATION_ID_PREFIX`) so that moving views between
    modules renames nothing."""

    def get_openapi_operation_id(self, operation: Operation) -> str:
        module = sys.modules.get(operation.view_func.__module__)
        prefix = getattr(module, "OPERATION_ID_PREFIX", None)
        if prefix is None:
            return super().get_openapi_operation_id(operation)
        return f"{prefix}_{operation.view_func.__name__}"


api = GraphloomApi(
    title="Graphloom API",
    version="1",
    description=(
        "Knowledge graphs from documents and websites. Authenticate with "
        "`Authorization: Bearer <token>` (create one under your workspace) or a browser session "
        "with the X-CSRFToken header. Workspace resources live under /workspaces/{slug}/."
    ),
    auth=[TokenAuth(), SessionAuth()],
    urls_namespace="api",
    docs_url="/docs",
)

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    415: "unsupported_media_type",
    422: "invalid",
    429: "rate_limited",
}


def error_response(
    request: HttpRequest, *, status: int, code: str, message: str, details: object = None
) -> HttpResponse:
    body: dict[str, object] = {"code": code, "message": message}
    if details is not None:
        body["details"] = details
    return api.create_response(request, {"error": body}, status=status)


@api.exception_handler(DomainError)
def on_domain_error(request: HttpRequest, exc: DomainError) -> HttpResponse:
    return error_response(request, status=exc.status, code=exc.code, message=exc.message)


@api.exception_handler(GraphBackendError)
def on_graph_backend_error(request: HttpRequest, exc: GraphBackendError) -> HttpResponse:
    """The graph backend (e.g. a Neo4j server) could not answer: a temporary condition,
    not a bug; its message is safe to show."""
    logger.warning("Graph backend error on %s %s: %s", request.method, request.path, exc)
    return error_response(request, status=503, code="graph_unavailable", message=str(exc))


@api.exception_handler(DataError)
def on_data_error(request: HttpRequest, exc: DataError) -> HttpResponse:
    """PostgreSQL refused a value that came with the request: a NUL character, a number,
    date or time zone out of range, a JSON string with \u0000. Validation lets such values
    through (they are valid JSON and valid Python), so they are the client's input: 422,
    logged with the traceback in case one was ours after all."""
    logger.warning("Database refused a value on %s %s", request.method, request.path, exc_info=exc)
    return error_response(
        request,
        status=422,
        code="invalid",
        message="Invalid input: a value cannot be stored or compared (a NUL character, or a "
        "number, date or time zone out of range).",
    )


@api.exception_handler(RequestDataTooBig)
def on_request_too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    """A body over DATA_UPLOAD_MAX_MEMORY_SIZE (config/settings/base.py): the client's."""
    return error_response(
        request, status=413, code="too_large", message="The request body is too large."
    )


@api.exception_handler(ValidationError)
def on_validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    fields = [".".join(str(p) for p in err.get("loc", ())) for err in exc.errors]
    message = "Invalid input" + (f": {', '.join(fields)}" if fields else ".")
    return error_response(request, status=422, code="invalid", message=message, details=exc.errors)


@api.exception_handler(AuthenticationError)
def on_authentication_error(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    message = str(exc.message) if getattr(exc, "message", None) else ""
    if not message or message == "Unauthorized":
        message = "Authentication required: send a Bearer token or sign in."
    response = error_response(request, status=401, code="unauthenticated", message=message)
    response["WWW-Authenticate"] = 'Bearer realm="graphloom"'
    return response


@api.exception_handler(AuthorizationError)
def on_authorization_error(request: HttpRequest, exc: AuthorizationError) -> HttpResponse:
    return error_response(request, status=403, code="forbidden", message=str(exc.message))


@api.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    code = _HTTP_CODES.get(exc.status_code, "error")
    return error_response(request, status=exc.status_code, code=code, message=str(exc.message))


@api.exception_handler(Http404)
def on_not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return error_response(request, status=404, code="not_found", message="Not found.")


@api.exception_handler(Exception)
def on_unexpected_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    if settings.DEBUG:
        raise exc
    logger.exception("Unhandled API error on %s %s", request.method, request.path)
    return error_response(
        request, status=500, code="internal_error", message="Internal error; it has been logged."
    )


api.add_router("/", system_router)
# Before the workspaces app: its `/workspaces/{slug}` would take `/workspaces/import`.
api.add_router("/", knowledge_archive_router)
api.add_router("/", workspaces_router)
api.add_router("/", ingest_router)
api.add_router("/", knowledge_router)
api.add_router("/", explorer_layout_router)
