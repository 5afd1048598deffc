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
    class Meta(SchemaType.Meta):
        constraints = [
            models.UniqueConstraint(fields=["workspace", "name"], name="relationtype_unique_name")
        ]
