"""The schema registry: the entity and relation types a workspace's graph uses.

An open vocabulary: seeded with a small default set, extended by people, and by the model
when it proposes a type with the `NEW:` prefix (recorded as proposed until accepted, or at
once when EXTRACTION_AUTO_ACCEPT_TYPES is on). Only active types are offered to the model;
their names and descriptions are part of the extraction cache key.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from workspaces.models import WorkspaceScopedModel


class TypeStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    PROPOSED = "proposed", "Proposed"
    RETIRED = "retired", "Retired"


class TypeOrigin(models.TextChoices):
    DEFAULT = "default", "Default set"
    USER = "user", "Added by a person"
    MODEL = "model", "Proposed by the model"
    OFFLINE = "offline", "Offline extractor (verb)"


class SchemaType(WorkspaceScopedModel):
    name = models.CharField(max_length=64)
    description = models.TextField(blank=True)
    examples = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=16, choices=TypeStatus.choices, default=TypeStatus.ACTIVE)
    origin = models.CharField(max_length=16, choices=TypeOrigin.choices, default=TypeOrigin.USER)
    # How often extraction asked for it: the review order of proposed types.
    proposed_count = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class EntityType(SchemaType):
    class Meta(SchemaType.Meta):
        constraints = [
            models.UniqueConstraint(fields=["workspace", "name"], name="entitytype_unique_name")
        ]


class RelationType(SchemaType):
    # Domain and range: the entity types a relation of this type may start and end at
    # (none: any). Links to the type rows rather than names, so renaming an entity type
    # keeps them; types are retired, never deleted. Shown to the model in the prompt; a
    # relation outside them is counted and listed for review, never refused.
    domain = models.ManyToManyField(EntityType, blank=True, related_name="domain_of")
    range = models.ManyToManyField(EntityType, blank=True, related_name="range_of")

    class Meta(SchemaType.Meta):
        constraints = [
            models.UniqueConstraint(fields=["workspace", "name"], name="relationtype_unique_name")
        ]


class TypeChangeAction(models.TextChoices):
    ACCEPT = "accept", "Accept"
    RETIRE = "retire", "Retire"
    RENAME = "rename", "Rename"
    DOMAIN = "domain", "Set domain and range"
    MERGE = "merge", "Merge into another type"


class TypeChange(WorkspaceScopedModel):
    """The log of the schema registry: one row per change a person made to a type, with
    what it was before, so each change is undone exactly. A merge retypes every entity (or
    relation) of `type_name` to `into` by the ordinary retype action (its own curation
    event, in each row's history) and retires `type_name`: this row groups those events,
    so the whole merge is undone at once; the rows left because their name (or edge)
    already existed in `into` are kept in `conflicts` for review."""

    kind = models.CharField(max_length=16)  # "entity" | "relation"
    action = models.CharField(max_length=16, choices=TypeChangeAction.choices)
    type_name = models.CharField(max_length=64)  # the type's name before the change
    into = models.CharField(max_length=64, blank=True)  # rename: the new name; merge: target
    # Prior values: {"status": …} | {"domain": [...], "range": [...]}.
    before = models.JSONField(default=dict, blank=True)
    # Merge: the retype events, in order (undone in reverse), and the rows left, as
    # [{"id": …, "name": …, "reason": …}].
    events = models.JSONField(default=list, blank=True)
    conflicts = models.JSONField(default=list, blank=True)
    summary = models.CharField(max_length=500, blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    undone_at = models.DateTimeField(null=True, blank=True)
    undone_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return self.summary
