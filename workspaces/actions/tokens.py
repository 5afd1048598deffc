"""Issue and revoke API tokens."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from workspaces import tokens
from workspaces.errors import InvalidInput
from workspaces.models import ApiToken, Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@dataclass(frozen=True, slots=True)
class IssuedToken:
    token: ApiToken
    plaintext: str  # shown once, never stored


@transaction.atomic
def do_create_api_token(*, workspace: Workspace, user: User, name: str) -> IssuedToken:
    """Issue a token acting as `user` in `workspace`; the plaintext is returned only here."""
    name = name.strip()
    if not name:
        raise InvalidInput("A token needs a name (what uses it, e.g. 'ci' or 'research-agent').")
    new = tokens.generate_token()
    token = ApiToken.objects.create(
        workspace=workspace,
        user=user,
        name=name[:100],
        prefix=new.prefix,
        secret_hash=new.secret_hash,
    )
    return IssuedToken(token=token, plaintext=new.plaintext)


@transaction.atomic
def do_revoke_api_token(*, token: ApiToken) -> ApiToken:
    """Revoke a token; revoking twice keeps the first revocation time."""
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token
