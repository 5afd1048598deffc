"""Reads of the workspaces app. Access checks take the user or workspace first.

The scoping rule of the whole product lives here: an object of another workspace is
reported exactly like a missing one (`NotFound`), never as forbidden.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, TypeVar

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ObjectDoesNotExist
from django.db import models
from django.utils import timezone

from workspaces import tokens
from workspaces.errors import NotFound, PermissionDenied
from workspaces.models import ApiToken, Membership, Role, Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

ModelT = TypeVar("ModelT", bound=models.Model)


def get_object_for_workspace[ModelT: models.Model](
    queryset: models.QuerySet[ModelT], workspace: Workspace, pk: object, *, label: str
) -> ModelT:
    """Fetch one row of `queryset` by primary key within `workspace`, or raise NotFound.

    Every `get_<thing>_for_workspace` selector of every app is built on this, so the
    "another workspace looks missing" rule is written once.
    """
    try:
        return queryset.get(workspace=workspace, pk=pk)
    except (ObjectDoesNotExist, ValueError, TypeError):
        raise NotFound(f"{label} {pk} not found.") from None


def get_workspaces_for_user(
    user: User | AnonymousUser, *, api_token: ApiToken | None = None
) -> models.QuerySet[Workspace]:
    """Workspaces the user belongs to; a token only ever sees its own workspace."""
    if not user.is_authenticated:
        return Workspace.objects.none()
    member_of = Membership.objects.filter(user=user).values("workspace_id")
    qs = Workspace.objects.filter(pk__in=member_of)
    if api_token is not None:
        qs = qs.filter(pk=api_token.workspace_id)
    return qs.order_by("name")


def get_membership(
    user: User | AnonymousUser, slug: str, *, api_token: ApiToken | None = None
) -> Membership:
    """The user's membership in workspace `slug`, or NotFound (never "forbidden")."""
    if not user.is_authenticated:
        raise NotFound(f"Workspace {slug!r} not found.")
    qs = Membership.objects.select_related("workspace", "user").filter(
        user=user, workspace__slug=slug
    )
    if api_token is not None:
        qs = qs.filter(workspace_id=api_token.workspace_id)
    membership = qs.first()
    if membership is None:
        raise NotFound(f"Workspace {slug!r} not found.")
    return membership


def require_role(membership: Membership, role: Role) -> None:
    if not membership.allows(role):
        raise PermissionDenied(
            f"This needs the {role.label.lower()} role in workspace {membership.workspace.slug!r}; "
            f"you are {membership.role}."
        )


def get_members(workspace: Workspace) -> models.QuerySet[Membership]:
    return (
        Membership.objects.for_workspace(workspace)
        .select_related("user")
        .order_by("user__username")
    )


def get_api_token_for_workspace(workspace: Workspace, token_id: object) -> ApiToken:
    return get_object_for_workspace(
        ApiToken.objects.select_related("user"), workspace, token_id, label="Token"
    )


def get_api_tokens(workspace: Workspace, *, user: User | None = None) -> models.QuerySet[ApiToken]:
    qs = ApiToken.objects.for_workspace(workspace).select_related("user")
    if user is not None:
        qs = qs.filter(user=user)
    return qs


def authenticate_api_token(plaintext: str) -> ApiToken | None:
    """The active token matching `plaintext`, touching last_used_at at most once a minute."""
    prefix = tokens.parse_prefix(plaintext)
    if prefix is None:
        return None
    token = (
        ApiToken.objects.select_related("user", "workspace")
        .filter(prefix=prefix, revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    if token is None or not tokens.matches(plaintext, token.secret_hash):
        return None
    now = timezone.now()
    touch_after = timedelta(seconds=settings.API_TOKEN_TOUCH_SECONDS)
    if token.last_used_at is None or now - token.last_used_at > touch_after:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def first_run_needed() -> bool:
    """True until the first account exists: `/` then leads to the first-run page."""
    return not get_user_model().objects.exists()


def llm_monthly_budget(workspace: Workspace) -> Decimal | None:
    """What the workspace's LLM calls may cost this month: its admins' amount, else
    LLM_WORKSPACE_MONTHLY_BUDGET_USD; None when there is no limit (0)."""
    amount = workspace.llm_monthly_budget_usd
    if amount is None:
        amount = Decimal(str(settings.LLM_WORKSPACE_MONTHLY_BUDGET_USD))
    return amount if amount > 0 else None
