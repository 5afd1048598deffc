"""Relation reads behind the graph API and the explorer: filtered lists, the shape one
relation takes in a payload, and a relation's detail with its evidence.
"""

from __future__ import annotations

from typing import Any

from django.db.models import (
    Q,
    QuerySet,
)

from knowledge.models import CurationEvent, Entity, EntityState, Relation, RelationEvidence
from knowledge.selectors.entities import _EVIDENCE_FIELDS, MAX_EVIDENCE, _document_ref, _snippet
from workspaces.models import Workspace
from workspaces.selectors import get_object_for_workspace


def list_relations(
    workspace: Workspace,
    *,
    source_id: int | None = None,
    target_id: int | None = None,
    entity_id: int | None = None,
    relation_type: str | None = None,
    state: str = EntityState.ACTIVE,
) -> QuerySet[Relation]:
    """Relations of the workspace, strongest first; `entity_id` matches either end."""
    relations = (
        Relation.objects.for_workspace(workspace)
        .filter(state=state)
        .select_related("type", "source__type", "target__type")
        .only(
            "id",
            "description",
            "keywords",
            "weight",
            "evidence_count",
            "state",
            "created_at",
            "type__name",
            "source__id",
            "source__name",
            "source__type__name",
            "target__id",
            "target__name",
            "target__type__name",
        )
    )
    if source_id is not None:
        relations = relations.filter(source_id=source_id)
    if target_id is not None:
        relations = relations.filter(target_id=target_id)
    if entity_id is not None:
        relations = relations.filter(Q(source_id=entity_id) | Q(target_id=entity_id))
    if relation_type:
        relations = relations.filter(type__name=relation_type)
    return relations.order_by("-weight", "pk")


def relation_out(relation: Relation) -> dict[str, Any]:
    def end(entity: Entity) -> dict[str, Any]:
        return {"id": entity.pk, "name": entity.name, "type": entity.type.name}

    return {
        "id": relation.pk,
        "source": end(relation.source),
        "target": end(relation.target),
        "type": relation.type.name,
        "description": relation.description,
        "keywords": [str(k) for k in (relation.keywords or [])],
        "weight": relation.weight,
        "evidence_count": relation.evidence_count,
        "state": relation.state,
        "created_at": relation.created_at,
    }


def get_relation_detail(
    workspace: Workspace, relation_id: object, *, evidence_limit: int = 20
) -> dict[str, Any]:
    """A relation with its newest evidence: the sentence each came from, where it is in
    its document, what the extractor said about it and how strongly."""
    relation = get_object_for_workspace(
        Relation.objects.select_related("type", "source__type", "target__type"),
        workspace,
        relation_id,
        label="Relation",
    )
    rows = RelationEvidence.objects.for_workspace(workspace).filter(relation=relation)
    evidence = []
    newest = (
        rows.select_related("chunk__document")
        .only(
            "id",
            "char_start",
            "char_end",
            "description",
            "keywords",
            "strength",
            "created_at",
            *_EVIDENCE_FIELDS,
        )
        .order_by("-created_at", "-pk")[: max(0, min(evidence_limit, MAX_EVIDENCE))]
    )
    for row in newest:
        snippet, snippet_start = _snippet(row.chunk, row.char_start, row.char_end, context=0)
        evidence.append(
            {
                "id": row.pk,
                "chunk_id": row.chunk_id,
                "document": _document_ref(row.chunk.document),
                "char_start": row.char_start,
                "char_end": row.char_end,
                "snippet": snippet,
                "snippet_start": snippet_start,
                "description": row.description,
                "keywords": [str(k) for k in (row.keywords or [])],
                "strength": row.strength,
                "created_at": row.created_at,
            }
        )
    return {**relation_out(relation), "evidence": evidence, "evidence_total": rows.count()}


def get_relation_change(workspace: Workspace, event: CurationEvent) -> dict[str, Any]:
    """A relation curation event and the relation as it is now (as `relations/{id}`
    shapes it, without evidence; None when an undo removed a hand-made relation): what
    the API and the MCP tools answer after a relation change."""
    relation = None
    if event.relation_id is not None:
        relation = get_relation_detail(workspace, event.relation_id, evidence_limit=0)
    return {"event": event, "relation": relation}
