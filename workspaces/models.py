"""Workspaces, memberships with roles, API tokens, and the scoping base every model uses."""

from __future__ import annotations

from typing import Self

from django.conf import settings
from django.core.validators import validate_slug
from django.db import models

# Every primary key is a bigint (DEFAULT_AUTO_FIELD): a larger id names no row, and must be
# refused before it reaches SQL, where it would be an error instead of "not found".
MAX_ID = 2**63 - 1


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer"
    EDITOR = "editor", "Editor"
    ADMIN = "admin", "Admin"

    @classmethod
    def rank(cls, role: str) -> int:
        """Roles are ordered: a higher role may do everything a lower one may."""
        return [cls.VIEWER, cls.EDITOR, cls.ADMIN].index(cls(role))


class Workspace(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=64, unique=True, validators=[validate_slug])
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set when an admin asks for the workspace to be deleted: from then on it has no
    # members (so it is missing to everyone), and a background task removes its rows in
    # batches, then the workspace itself (workspaces/actions/workspaces.py).
    deletion_requested_at = models.DateTimeField(null=True, blank=True)
    # What the workspace's LLM calls may cost in a calendar month (LLM_PRICE_* currency),
    # set by its admins: empty means LLM_WORKSPACE_MONTHLY_BUDGET_USD, 0 means no limit.
    # Extraction pauses when it is spent (knowledge/actions/extraction/monthly_budget.py).
    llm_monthly_budget_usd = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def state(self) -> str:
        return "active" if self.deletion_requested_at is None else "deleting"


class WorkspaceScopedQuerySet(models.QuerySet):
    """The one way to read tenant rows: `Model.objects.for_workspace(ws)`."""

    def for_workspace(self, workspace: Workspace) -> Self:
        return self.filter(workspace=workspace)


class WorkspaceScopedModel(models.Model):
    """Abstract base for every tenant row: a workspace foreign key and a scoped manager."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")

    objects = WorkspaceScopedQuerySet.as_manager()

    class Meta:
        abstract = True


class Membership(WorkspaceScopedModel):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "user"], name="membership_unique_user")
        ]
        ordering = ["workspace", "user"]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"

    def allows(self, role: str) -> bool:
        return Role.rank(self.role) >= Role.rank(role)


class ApiToken(WorkspaceScopedModel):
    """A bearer token acting as its user within one workspace, with that user's role there.

    Only a SHA-256 of the secret is stored; `prefix` (the public part) finds the row.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    secret_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
