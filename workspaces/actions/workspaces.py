"""Create and change workspaces and their members."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import IntegrityError, transaction

from workspaces.errors import Conflict, InvalidInput, NotFound
from workspaces.models import Membership, Role, Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def _validated_slug(slug: str) -> str:
    slug = slug.strip().lower()
    try:
        validate_slug(slug)
    except ValidationError:
        raise InvalidInput(
            f"Invalid workspace slug {slug!r}: use letters, digits, hyphens and underscores."
        ) from None
    if len(slug) > 64:
        raise InvalidInput("Workspace slugs are at most 64 characters.")
    return slug


@transaction.atomic
def do_create_workspace(
    *, slug: str, name: str = "", description: str = "", owner: User | None = None
) -> Workspace:
    """Create a workspace; its owner, if given, becomes its first admin."""
    slug = _validated_slug(slug)
    name = (name or slug).strip()[:200]
    try:
        with transaction.atomic():
            workspace = Workspace.objects.create(slug=slug, name=name, description=description)
    except IntegrityError:
        raise Conflict(f"A workspace with slug {slug!r} already exists.") from None
    if owner is not None:
        Membership.objects.create(workspace=workspace, user=owner, role=Role.ADMIN)
    return workspace


@transaction.atomic
def do_update_workspace(
    *, workspace: Workspace, name: str | None = None, description: str | None = None
) -> Workspace:
    if name is not None:
        if not name.strip():
            raise InvalidInput("A workspace name cannot be empty.")
        workspace.name = name.strip()[:200]
    if description is not None:
        workspace.description = description
    workspace.save(update_fields=["name", "description"])
    return workspace


@transaction.atomic
def do_set_membership(*, workspace: Workspace, username: str, role: str) -> Membership:
    """Add a user to a workspace or change their role there."""
    if role not in Role.values:
        raise InvalidInput(f"Unknown role {role!r}; choose one of {', '.join(Role.values)}.")
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotFound(f"User {username!r} not found.")
    membership, _ = Membership.objects.update_or_create(
        workspace=workspace, user=user, defaults={"role": role}
    )
    return membership


@transaction.atomic
def do_create_user(*, username: str, email: str = "", password: str | None = None) -> User:
    """Create a user; without a password the account cannot log in until one is set."""
    user_model = get_user_model()
    if user_model.objects.filter(username=username).exists():
        raise Conflict(f"User {username!r} already exists.")
    return user_model.objects.create_user(username=username, email=email, password=password)
