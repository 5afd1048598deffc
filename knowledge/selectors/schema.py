"""Reads of the schema registry: the types a workspace offers, the snapshot extraction is
keyed on, and what the Schema page shows: counts and examples per type, proposed types
with sample mentions, domain and range violations, type merges.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Window
from django.db.models.functions import RowNumber

from knowledge.extraction.schema import SchemaSnapshot
from knowledge.models import (
    Entity,
    EntityState,
    EntityType,
    Mention,
    Relation,
    RelationType,
    TypeStatus,
)
from knowledge.models.schema import SchemaType, TypeChange
from knowledge.prompts import describe_relation_type
from workspaces.models import Workspace
from workspaces.selectors import get_object_for_workspace

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

EXAMPLES_PER_TYPE = 3
MAX_VIOLATIONS_PAGE = 50
RECENT_CHANGES = 20


def get_schema_snapshot(workspace: Workspace) -> SchemaSnapshot:
    entity = tuple(
        EntityType.objects.for_workspace(workspace)
        .filter(status=TypeStatus.ACTIVE)
        .order_by("name")
        .values_list("name", "description")
    )
    # Domain and range are told to the model with the description, so they are part of
    # the hash too: setting them re-runs extraction like any other schema change.
    signatures = relation_signatures(workspace)
    relation = tuple(
        (name, describe_relation_type(description, *signatures.get(name, ((), ()))))
        for name, description in RelationType.objects.for_workspace(workspace)
        .filter(status=TypeStatus.ACTIVE)
        .order_by("name")
        .values_list("name", "description")
    )
    digest = hashlib.sha256(
        json.dumps({"entity": entity, "relation": relation}, sort_keys=True).encode()
    ).hexdigest()
    return SchemaSnapshot(entity_types=entity, relation_types=relation, hash=digest)


class EntityCount(TypedDict):
    entity_count: int


class RelationCount(TypedDict):
    relation_count: int


def list_entity_types(workspace: Workspace) -> list[WithAnnotations[EntityType, EntityCount]]:
    return list(
        EntityType.objects.for_workspace(workspace)
        .annotate(entity_count=Count("entities"))
        .order_by("status", "name")
    )


def list_relation_types(
    workspace: Workspace,
) -> list[WithAnnotations[RelationType, RelationCount]]:
    return list(
        RelationType.objects.for_workspace(workspace)
        .annotate(relation_count=Count("relations"))
        .order_by("status", "name")
    )


def relation_signatures(workspace: Workspace) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Each relation type's domain and range as sorted entity type names (only the types
    that have either)."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    for side, through in ((0, RelationType.domain.through), (1, RelationType.range.through)):
        rows = (
            through.objects.filter(relationtype__workspace=workspace)
            .order_by("entitytype__name")
            .values_list("relationtype__name", "entitytype__name")
        )
        for relation_name, entity_name in rows:
            found.setdefault(relation_name, ([], []))[side].append(entity_name)
    return {name: (tuple(d), tuple(r)) for name, (d, r) in found.items()}


# Proposed types listed on the Schema page (the most asked-for; the rest are counted).
PROPOSED_SHOWN = 50


@dataclass
class TypeRow:
    """One type as the Schema page shows it."""

    id: int
    name: str
    status: str
    origin: str
    description: str
    proposed_count: int
    count: int = 0
    examples: list[tuple[int, str]] = field(default_factory=list)  # (id, label)
    samples: list[str] = field(default_factory=list)  # proposed types: what extraction saw
    domain: tuple[str, ...] = ()
    range: tuple[str, ...] = ()
    violations: int = 0


@dataclass
class SchemaOverview:
    entity_types: list[TypeRow]
    relation_types: list[TypeRow]
    changes: list[TypeChange]

    @property
    def listed_entity_types(self) -> list[TypeRow]:
        """The entity types in use or retired: proposed ones have their own list."""
        return [r for r in self.entity_types if r.status != TypeStatus.PROPOSED]

    @property
    def listed_relation_types(self) -> list[TypeRow]:
        return [r for r in self.relation_types if r.status != TypeStatus.PROPOSED]

    @property
    def proposed(self) -> list[tuple[str, TypeRow]]:
        """Proposed types of both kinds, the most asked-for first."""
        rows = [("entity", r) for r in self.entity_types if r.status == TypeStatus.PROPOSED]
        rows += [("relation", r) for r in self.relation_types if r.status == TypeStatus.PROPOSED]
        return sorted(rows, key=lambda kr: (-kr[1].proposed_count, kr[1].name))

    @property
    def proposed_shown(self) -> list[tuple[str, TypeRow]]:
        """The PROPOSED_SHOWN most asked-for: an extractor can propose hundreds (the
        offline one names a relation after every table header it reads)."""
        return self.proposed[:PROPOSED_SHOWN]

    @property
    def proposed_hidden(self) -> int:
        return max(0, len(self.proposed) - PROPOSED_SHOWN)

    @property
    def violations(self) -> int:
        return sum(r.violations for r in self.relation_types)


def _rows(queryset: QuerySet[EntityType] | QuerySet[RelationType], related: str) -> list[TypeRow]:
    counted = queryset.annotate(
        used=Count(related, filter=Q(**{f"{related}__state": EntityState.ACTIVE}))
    ).order_by("name")
    return [
        TypeRow(
            id=t.pk,
            name=t.name,
            status=t.status,
            origin=t.origin,
            description=t.description,
            proposed_count=t.proposed_count,
            count=t.used,
        )
        for t in counted
    ]


def _first_per_type(queryset: QuerySet[Entity] | QuerySet[Relation], order: str) -> QuerySet:
    """At most EXAMPLES_PER_TYPE rows per type, in `order`: one query for every type."""
    return (
        queryset.annotate(
            rank=Window(RowNumber(), partition_by=[F("type_id")], order_by=[F(order).desc(), "pk"])
        )
        .filter(rank__lte=EXAMPLES_PER_TYPE)
        .order_by("type_id", "rank")
    )


def get_schema_overview(workspace: Workspace) -> SchemaOverview:
    """The Schema page: every type with its count of active rows and examples; proposed
    entity types with the names extraction gave them; domain, range and violations."""
    entity_rows = _rows(EntityType.objects.for_workspace(workspace), "entities")
    relation_rows = _rows(RelationType.objects.for_workspace(workspace), "relations")
    by_entity = {r.id: r for r in entity_rows}
    by_relation = {r.id: r for r in relation_rows}
    active_entities = Entity.objects.for_workspace(workspace).filter(state=EntityState.ACTIVE)
    for pk, name, type_id in _first_per_type(active_entities, "mention_count").values_list(
        "pk", "name", "type_id"
    ):
        by_entity[type_id].examples.append((pk, name))
    active_relations = Relation.objects.for_workspace(workspace).filter(state=EntityState.ACTIVE)
    for pk, source, target, type_id in _first_per_type(active_relations, "weight").values_list(
        "pk", "source__name", "target__name", "type_id"
    ):
        by_relation[type_id].examples.append((pk, f"{source} → {target}"))
    _add_samples(workspace, [r for r in entity_rows if r.status == TypeStatus.PROPOSED])
    signatures = relation_signatures(workspace)
    counts = violation_counts(workspace)
    for row in relation_rows:
        row.domain, row.range = signatures.get(row.name, ((), ()))
        row.violations = counts.get(row.id, 0)
    changes = list(
        TypeChange.objects.for_workspace(workspace).select_related("actor")[:RECENT_CHANGES]
    )
    return SchemaOverview(entity_rows, relation_rows, changes)


def _add_samples(workspace: Workspace, rows: list[TypeRow]) -> None:
    """The surface forms extraction typed with each proposed entity type (a few each)."""
    for row in rows:
        row.samples = list(
            Mention.objects.for_workspace(workspace)
            .filter(extracted_type=row.name)
            .values_list("surface_form", flat=True)
            .distinct()
            .order_by("surface_form")[:EXAMPLES_PER_TYPE]
        )


def _violating(workspace: Workspace) -> QuerySet[Relation]:
    """Active relations whose source type is outside their type's domain, or whose target
    type is outside its range (an empty domain or range allows any type)."""
    domain = RelationType.domain.through.objects.filter(relationtype_id=OuterRef("type_id"))
    range_ = RelationType.range.through.objects.filter(relationtype_id=OuterRef("type_id"))
    outside_domain = Exists(domain) & ~Exists(
        domain.filter(entitytype_id=OuterRef("source__type_id"))
    )
    outside_range = Exists(range_) & ~Exists(
        range_.filter(entitytype_id=OuterRef("target__type_id"))
    )
    return (
        Relation.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE)
        .filter(outside_domain | outside_range)
    )


def violation_counts(workspace: Workspace) -> dict[int, int]:
    """Relation type id → its active relations outside its domain or range."""
    rows = _violating(workspace).values("type_id").annotate(n=Count("pk")).order_by()
    return {row["type_id"]: row["n"] for row in rows}


def list_violations(
    workspace: Workspace, *, type_id: int | None = None, offset: int = 0, limit: int = 20
) -> list[Relation]:
    """A page of the relations outside their type's domain or range, oldest first."""
    rows = _violating(workspace).select_related("source__type", "target__type", "type")
    if type_id is not None:
        rows = rows.filter(type_id=type_id)
    limit = max(1, min(limit, MAX_VIOLATIONS_PAGE))
    return list(rows.order_by("pk")[max(0, offset) : max(0, offset) + limit])


def get_schema_type(workspace: Workspace, kind: str, type_id: int) -> SchemaType:
    """An entity (`kind` "entity") or relation type of the workspace; NotFound otherwise."""
    model: type[SchemaType] = EntityType if kind == "entity" else RelationType
    return get_object_for_workspace(model.objects.all(), workspace, type_id, label=f"{kind} type")


def get_type_change(workspace: Workspace, change_id: int) -> TypeChange:
    return get_object_for_workspace(
        TypeChange.objects.all(), workspace, change_id, label="schema change"
    )


def latest_type_change(
    workspace: Workspace, *, actor_id: int | None, name: str
) -> TypeChange | None:
    """This person's newest change still standing that concerns the type `name`."""
    return (
        TypeChange.objects.for_workspace(workspace)
        .filter(actor_id=actor_id, undone_at__isnull=True)
        .filter(Q(type_name=name) | Q(into=name))
        .order_by("-pk")
        .first()
    )
