"""Reads of the schema registry: the types a workspace offers, and the snapshot extraction
is keyed on.
"""

from __future__ import annotations

import hashlib
import json

from django.db.models import Count

from knowledge.extraction.schema import SchemaSnapshot
from knowledge.models import (
    EntityType,
    RelationType,
    TypeStatus,
)
from workspaces.models import Workspace


def get_schema_snapshot(workspace: Workspace) -> SchemaSnapshot:
    entity = tuple(
        EntityType.objects.for_workspace(workspace)
        .filter(status=TypeStatus.ACTIVE)
        .order_by("name")
        .values_list("name", "description")
    )
    relation = tuple(
        RelationType.objects.for_workspace(workspace)
        .filter(status=TypeStatus.ACTIVE)
        .order_by("name")
        .values_list("name", "description")
    )
    digest = hashlib.sha256(
        json.dumps({"entity": entity, "relation": relation}, sort_keys=True).encode()
    ).hexdigest()
    return SchemaSnapshot(entity_types=entity, relation_types=relation, hash=digest)


def list_entity_types(workspace: Workspace) -> list[EntityType]:
    return list(
        EntityType.objects.for_workspace(workspace)
        .annotate(entity_count=Count("entities"))
        .order_by("status", "name")
    )


def list_relation_types(workspace: Workspace) -> list[RelationType]:
    return list(
        RelationType.objects.for_workspace(workspace)
        .annotate(relation_count=Count("relations"))
        .order_by("status", "name")
    )
