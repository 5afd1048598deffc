"""API authentication: bearer tokens and Django sessions (with CSRF on unsafe methods).

Ninja's own cookie auth checks CSRF before it knows whether a session exists, which turns
a missing credential into a 403; these classes answer 401 for "who are you?" and 403 only
for a session request without a CSRF token.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.http import HttpRequest
from ninja.errors import AuthenticationError, HttpError
from ninja.security import APIKeyCookie, HttpBearer
from ninja.utils import check_csrf

from workspaces.models import ApiToken, Membership, Role
from workspaces.selectors import authenticate_api_token, get_membership, require_role

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class TokenAuth(HttpBearer):
    """`Authorization: Bearer glm_…`; a present but invalid or revoked token is a 401."""

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken:
        api_token = authenticate_api_token(token)
        if api_token is None:
            raise AuthenticationError(message="Invalid or revoked API token.")
        request.user = api_token.user
        return api_token


class SessionAuth(APIKeyCookie):
    """The browser's Django session; unsafe methods also need the CSRF token."""

    param_name = settings.SESSION_COOKIE_NAME

    def _get_key(self, request: HttpRequest) -> str | None:
        return request.COOKIES.get(self.param_name)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        if not request.user.is_authenticated:
            return None
        if check_csrf(request) is not None:
            raise HttpError(
                403, "CSRF check failed: send the X-CSRFToken header with the csrftoken cookie."
            )
        return request.user


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling the API: the user, and the token when it came with one."""

    user: User
    api_token: ApiToken | None


def get_caller(request: HttpRequest) -> Caller:
    auth = getattr(request, "auth", None)
    if isinstance(auth, ApiToken):
        return Caller(user=auth.user, api_token=auth)
    return Caller(user=request.user, api_token=None)  # type: ignore[arg-type]


def get_workspace_access(
    request: HttpRequest, slug: str, *, role: Role = Role.VIEWER
) -> Membership:
    """The caller's membership in workspace `slug`, requiring at least `role`.

    NotFound for strangers (404, like a missing workspace), PermissionDenied (403) for a
    member whose role is too low. Every workspace API handler starts here.
    """
    caller = get_caller(request)
    membership = get_membership(caller.user, slug, api_token=caller.api_token)
    require_role(membership, role)
    return membership
