"""Create, change and delete workspaces and their members.

Deleting a workspace is two steps. `do_request_workspace_deletion` marks it and removes its
memberships in one transaction, so from that commit on it is missing (404) to everyone, on
every path (API, pages, MCP), and hidden from every list; then the background task runs
`do_delete_workspace`, which removes every row in batches (each batch its own transaction,
so no giant lock and no giant rollback) and finally the workspace. The apps above this one
delete their own rows first through WORKSPACE_DELETION_HOOKS (dotted paths, top app first,
loaded lazily: this app never imports them), because only they know their order (the
knowledge graph's types are PROTECTed by its entities) and their side effects (blobs on
disk, graph projections). Whatever a hook left behind, or a model no hook knows about, is
swept here in dependency order, children first: a new tenant model is covered without
anyone remembering it. Every step finds its work by querying, so a run that crashed is
finished by the next one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.core.validators import validate_slug
from django.db import IntegrityError, models, transaction
from django.utils import timezone

from system.enqueue import enqueue_on_commit
from system.loading import import_paths
from workspaces.errors import Conflict, InvalidInput, NotFound
from workspaces.models import Membership, Role, Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

# Rows deleted per transaction when a workspace is deleted.
DELETION_BATCH_SIZE = 1000

# Called with (what, rows deleted so far) after each batch: `manage.py workspace delete`
# prints it.
DeletionProgress = Callable[[str, int], None]

# Slugs the API's own paths take after /api/v1/workspaces/ (POST /workspaces/import,
# knowledge/api/archive.py): a workspace named so could not be reached there.
RESERVED_SLUGS = frozenset({"import"})


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
    if slug in RESERVED_SLUGS:
        raise InvalidInput(f"The workspace slug {slug!r} is reserved: choose another.")
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


# The largest monthly LLM budget a workspace may be given (the field's 12 digits, 2 after
# the point).
MAX_LLM_MONTHLY_BUDGET = Decimal("9999999999.99")


@transaction.atomic
def do_set_llm_monthly_budget(*, workspace: Workspace, amount: object) -> Workspace:
    """Set the workspace's own monthly LLM budget (LLM_PRICE_* currency): a number of 0 or
    more (0: no limit), or None to follow LLM_WORKSPACE_MONTHLY_BUDGET_USD. Raising it is
    what lets paused extraction go on: the caller resumes it
    (knowledge/actions/extraction/monthly_budget.py)."""
    value: Decimal | None = None
    if amount is not None and amount != "":
        try:
            value = Decimal(str(amount).strip())
        except InvalidOperation:
            raise InvalidInput(
                f"llm_monthly_budget_usd: {str(amount)[:40]!r} is not a number."
            ) from None
        if not value.is_finite() or value < 0 or value > MAX_LLM_MONTHLY_BUDGET:
            raise InvalidInput(
                "llm_monthly_budget_usd: expected an amount from 0 (no limit) to "
                f"{MAX_LLM_MONTHLY_BUDGET:,}, or empty for the server's default."
            )
        value = value.quantize(Decimal("0.01"))
    workspace = Workspace.objects.select_for_update().get(pk=workspace.pk)
    workspace.llm_monthly_budget_usd = value
    workspace.save(update_fields=["llm_monthly_budget_usd"])
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


@transaction.atomic
def do_request_workspace_deletion(
    *, workspace: Workspace, actor: User | None, in_background: bool = True
) -> Workspace:
    """Mark the workspace as being deleted and queue its deletion (unless the caller runs
    it itself: `in_background=False`). Its memberships go at once, in this transaction:
    from the commit on, nobody reaches it (404 on every API route, page and MCP call, its
    tokens included) and no list shows it. Asking again changes nothing but queues the
    task again (a lost task is not a stuck workspace). `actor` is who asked, for the log."""
    locked = Workspace.objects.select_for_update().get(pk=workspace.pk)
    if locked.deletion_requested_at is None:
        locked.deletion_requested_at = timezone.now()
        locked.save(update_fields=["deletion_requested_at"])
    Membership.objects.filter(workspace=locked).delete()
    logger.info(
        "workspace_deletion_requested workspace=%s by=%s",
        locked.slug,
        actor.get_username() if actor is not None else "-",
    )
    if in_background:
        enqueue_on_commit("workspaces.tasks.delete_workspace", locked.pk)
    return locked


def do_delete_workspace(
    *,
    workspace_id: int,
    batch_size: int = DELETION_BATCH_SIZE,
    progress: DeletionProgress | None = None,
) -> bool:
    """Delete the workspace and everything in it, in batches: the hooks of the apps above
    (WORKSPACE_DELETION_HOOKS, top app first), then every remaining tenant row children
    first, then the workspace. Only a workspace whose deletion was requested is deleted.
    Idempotent and resumable: returns False when the workspace is gone already."""
    workspace = Workspace.objects.filter(pk=workspace_id).first()
    if workspace is None:
        return False
    if workspace.deletion_requested_at is None:
        raise Conflict(f"Workspace {workspace.slug!r} was not marked for deletion.")
    for hook in import_paths(settings.WORKSPACE_DELETION_HOOKS):
        hook(workspace_id=workspace_id, batch_size=batch_size, progress=progress)
    purge_workspace_rows(
        workspace_id=workspace_id,
        models=tenant_models(),
        batch_size=batch_size,
        progress=progress,
    )
    with transaction.atomic():
        Workspace.objects.filter(pk=workspace_id).delete()
    if progress:
        progress("workspaces.Workspace", 1)
    return True


def tenant_models(app_label: str | None = None) -> list[type[models.Model]]:
    """Every installed model with a `workspace` foreign key (of `app_label` only, if given),
    ordered so that a model comes before every model it refers to: deleting in this order
    never meets a protected or dangling reference. Tables nothing refers to and that refer
    to nothing (search words kept by triggers, summaries) come last, after the rows whose
    deletion may still touch them."""
    scoped = [m for m in apps.get_models() if _is_tenant(m)]
    if app_label is not None:
        scoped = [m for m in scoped if m._meta.app_label == app_label]
    refers = {m: _referenced_models(m) & set(scoped) - {m} for m in scoped}
    referenced = set().union(*refers.values()) if refers else set()
    ordered: list[type[models.Model]] = []
    placed: set[type[models.Model]] = set()

    def place(model: type[models.Model]) -> None:
        if model in placed:
            return
        placed.add(model)
        for child in scoped:  # referrers first
            if model in refers[child]:
                place(child)
        ordered.append(model)

    connected = [m for m in scoped if refers[m] or m in referenced]
    for model in connected:
        place(model)
    return ordered + [m for m in scoped if m not in placed]


def purge_workspace_rows(
    *,
    workspace_id: int,
    models: Iterable[type[models.Model]],
    batch_size: int = DELETION_BATCH_SIZE,
    progress: DeletionProgress | None = None,
) -> int:
    """Delete the workspace's rows of each model in turn, `batch_size` rows per
    transaction (Django's delete: what refers to them is cascaded or set null as the
    models say). Returns the number of rows deleted."""
    total = 0
    for model in models:
        done = 0
        while deleted := _delete_batch(model, workspace_id=workspace_id, size=batch_size):
            done += deleted
            if progress:
                progress(model._meta.label, done)
        total += done
    return total


def _delete_batch(model: type[models.Model], *, workspace_id: int, size: int) -> int:
    manager = model._base_manager
    with transaction.atomic():
        ids = list(
            manager.filter(workspace_id=workspace_id)
            .order_by()
            .values_list("pk", flat=True)[: max(1, size)]
        )
        if ids:
            manager.filter(pk__in=ids).delete()
    return len(ids)


def _is_tenant(model: type[models.Model]) -> bool:
    try:
        field = model._meta.get_field("workspace")
    except FieldDoesNotExist:
        return False
    return bool(field.many_to_one and field.related_model is Workspace)


def _referenced_models(model: type[models.Model]) -> set[type[models.Model]]:
    return {
        field.related_model
        for field in model._meta.get_fields()
        if field.concrete and (field.many_to_one or field.one_to_one) and field.related_model
    }
