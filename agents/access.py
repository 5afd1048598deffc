"""Who an agent is: the API token it presented, the one workspace that token belongs to and
the role its user holds there. The token decides everything, exactly as in the JSON API
(workspaces/auth.py): the lookup is the same selector, and a stranger's workspace is
"not found", never "forbidden".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from workspaces.errors import NotFound
from workspaces.models import ApiToken, Membership, Role, Workspace
from workspaces.selectors import authenticate_api_token, get_membership, require_role

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class InvalidToken(Exception):
    """No active token matches what was presented (missing, mistyped or revoked)."""


@dataclass(frozen=True, slots=True)
class Access:
    """An authenticated agent: every tool reads and writes `workspace` only, as `user`.

    `base_url` ("https://host", or "" when unknown, as over stdio) makes the links a
    write tool returns absolute."""

    token: ApiToken
    membership: Membership
    transport: str
    base_url: str = ""

    @property
    def workspace(self) -> Workspace:
        return self.membership.workspace

    @property
    def user(self) -> User:
        return self.membership.user

    @property
    def role(self) -> str:
        return self.membership.role

    def require(self, role: Role) -> None:
        """PermissionDenied naming the role needed when the token's role is lower."""
        require_role(self.membership, role)


def access_for_token(
    plaintext: str, *, transport: str, slug: str | None = None, base_url: str = ""
) -> Access:
    """The agent behind `plaintext`. InvalidToken when no active token matches; NotFound
    when `slug` is given and is not the token's workspace (as for a missing workspace)."""
    token = authenticate_api_token(plaintext)
    if token is None:
        raise InvalidToken("Invalid or revoked API token.")
    wanted = slug if slug is not None else token.workspace.slug
    try:
        membership = get_membership(token.user, wanted, api_token=token)
    except NotFound:
        if slug is None:  # the token's user left its workspace: the token is worthless
            raise InvalidToken("This API token's user is no longer a member.") from None
        raise
    return Access(token=token, membership=membership, transport=transport, base_url=base_url)
