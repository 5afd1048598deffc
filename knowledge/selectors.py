"""Reads of the knowledge app, each scoped to a workspace given first."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Count, Q, Sum

from ingest.models import Document, DocumentStatus, Source, SourceStatus
from knowledge.models import (
    CurationAction,
    CurationEvent,
    Entity,
    EntityState,
    EntityType,
    ExtractionRun,
    ExtractionStatus,
    LlmCall,
    Mention,
    MergeSuggestion,
    RelationEvidence,
    RelationType,
    SourceExtraction,
    TypeStatus,
)
from workspaces.errors import InvalidInput, NotFound
from workspaces.models import Workspace
from workspaces.selectors import get_object_for_workspace


@dataclass(frozen=True, slots=True)
class SchemaSnapshot:
    """The active types offered to extraction, and the hash that keys the cache on them."""

    entity_types: tuple[tuple[str, str], ...]  # (name, description)
    relation_types: tuple[tuple[str, str], ...]
    hash: str

    @property
    def entity_type_names(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.entity_types)

    @property
    def relation_type_names(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.relation_types)


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


def get_source_extraction(workspace: Workspace, source: Source) -> SourceExtraction | None:
    return SourceExtraction.objects.for_workspace(workspace).filter(source=source).first()


def get_source_runs(workspace: Workspace, source: Source) -> list[ExtractionRun]:
    """The runs whose evidence this source's documents carry (cached ones included)."""
    run_ids = set(
        Mention.objects.for_workspace(workspace)
        .filter(chunk__document__source=source)
        .values_list("run_id", flat=True)
        .distinct()
    ) | set(
        RelationEvidence.objects.for_workspace(workspace)
        .filter(chunk__document__source=source)
        .values_list("run_id", flat=True)
        .distinct()
    )
    return list(
        ExtractionRun.objects.for_workspace(workspace).filter(pk__in=run_ids).order_by("created_at")
    )


def get_workspace_token_usage(workspace: Workspace) -> dict[str, object]:
    totals = LlmCall.objects.for_workspace(workspace).aggregate(
        calls=Count("pk"),
        prompt_tokens=Sum("prompt_tokens"),
        completion_tokens=Sum("completion_tokens"),
        cost=Sum("cost"),
    )
    return {
        "calls": totals["calls"] or 0,
        "prompt_tokens": totals["prompt_tokens"] or 0,
        "completion_tokens": totals["completion_tokens"] or 0,
        "cost": float(totals["cost"] or 0),
    }


def extraction_status(account: SourceExtraction | None, source: Source) -> str:
    """What to show for a source's extraction: a finished source whose extraction did not
    stop early is done."""
    if account is None:
        return ExtractionStatus.PENDING
    if account.status == ExtractionStatus.RUNNING and source.status in {
        SourceStatus.DONE,
        SourceStatus.FAILED,
        SourceStatus.CANCELLED,
    }:
        return ExtractionStatus.DONE
    return str(account.status)


def documents_for_extraction(
    *, workspace: Workspace, source: Source | None = None
) -> list[Document]:
    """Documents whose text is ready for extraction (extracted or done, not failed)."""
    queryset = Document.objects.for_workspace(workspace).filter(
        status__in=[DocumentStatus.DONE, DocumentStatus.EXTRACTED]
    )
    if source is not None:
        queryset = queryset.filter(source=source)
    return list(queryset.select_related("workspace").order_by("source_id", "pk"))


def get_extraction_summary(workspace: Workspace, source: Source) -> dict[str, Any]:
    """Everything the API and UI show about a source's extraction, in one dict."""
    account = get_source_extraction(workspace, source)
    runs = ExtractionRun.objects.for_workspace(workspace).filter(
        Q(source=source)
        | Q(pk__in=Mention.objects.filter(chunk__document__source=source).values("run_id"))
        | Q(pk__in=RelationEvidence.objects.filter(chunk__document__source=source).values("run_id"))
    )
    mentions = Mention.objects.for_workspace(workspace).filter(chunk__document__source=source)
    evidence = RelationEvidence.objects.for_workspace(workspace).filter(
        chunk__document__source=source
    )
    settings_ = source.settings or {}
    extractor = account.extractor if account else ""
    return {
        "source_id": source.pk,
        "extractor": extractor,
        "offline": extractor == "offline",
        "model": account.model if account else "",
        "status": extraction_status(account, source),
        "message": account.message if account else "",
        "known_only": bool(settings_.get("known_only")),
        "token_budget": account.token_budget if account else settings_.get("token_budget"),
        "tokens": {
            "prompt": account.prompt_tokens if account else 0,
            "completion": account.completion_tokens if account else 0,
            "total": account.tokens_used if account else 0,
        },
        "calls": account.calls if account else 0,
        "cost": float(account.cost) if account else 0.0,
        "windows": {
            "extracted": account.windows_extracted if account else 0,
            "cached": account.windows_cached if account else 0,
            "skipped": account.windows_skipped if account else 0,
        },
        "counts": (account.counts if account else {}) or {},
        "entities": mentions.values("entity_id").distinct().count(),
        "relations": evidence.values("relation_id").distinct().count(),
        "mentions": mentions.count(),
        "runs": list(runs.distinct().order_by("-created_at")[:200]),
        "runs_total": runs.distinct().count(),
        "started_at": account.started_at if account else None,
        "updated_at": account.updated_at if account else None,
    }


def get_entity_for_workspace(workspace: Workspace, entity_id: int) -> Entity:
    return get_object_for_workspace(
        Entity.objects.select_related("type"), workspace, entity_id, label="entity"
    )


def find_entity(workspace: Workspace, ref: str) -> Entity:
    """An entity by id or by exact name (for commands); ambiguous names are refused."""
    queryset = Entity.objects.for_workspace(workspace).select_related("type")
    if ref.isdigit():
        found = queryset.filter(pk=int(ref)).first()
        if found is not None:
            return found
    matches = list(queryset.filter(name=ref, state=EntityState.ACTIVE)[:3])
    if not matches:
        raise NotFound(f"No entity {ref!r} in this workspace.")
    if len(matches) > 1:
        raise InvalidInput(
            f"{ref!r} names several entities ({', '.join(str(e.pk) for e in matches)}); use the id."
        )
    return matches[0]


def find_merge_event(workspace: Workspace, entity: Entity) -> CurationEvent:
    """The merge that absorbed `entity`, or else the latest merge into it, not undone."""
    merges = CurationEvent.objects.for_workspace(workspace).filter(
        action__in=[CurationAction.MERGE, CurationAction.AUTO_MERGE], undone_by__isnull=True
    )
    if entity.state == EntityState.MERGED:
        for event in merges.order_by("-created_at"):
            if entity.pk in {m["id"] for m in event.payload.get("merged", [])}:
                return event
    found = merges.filter(entity=entity).order_by("-created_at").first()
    if found is None:
        raise NotFound(f"No merge of {entity.name!r} to undo.")
    return found


def list_merge_suggestions(workspace: Workspace, *, status: str = "open") -> Any:
    return (
        MergeSuggestion.objects.for_workspace(workspace)
        .filter(status=status)
        .select_related("entity_a__type", "entity_b__type")
        .order_by("-score", "pk")
    )


def list_curation_events(workspace: Workspace, *, entity_id: int | None = None) -> Any:
    events = CurationEvent.objects.for_workspace(workspace).select_related("actor")
    if entity_id is not None:
        events = events.filter(entity_id=entity_id)
    return events.order_by("-created_at", "-pk")


def get_entities_to_consolidate(workspace: Workspace, *, source: Source | None = None) -> Any:
    """Active entities of the workspace (only those a source mentions, when given)."""
    entities = Entity.objects.for_workspace(workspace).filter(state=EntityState.ACTIVE)
    if source is not None:
        entities = entities.filter(
            pk__in=Mention.objects.filter(chunk__document__source=source).values("entity_id")
        )
    return entities


# The `top` members of each of `communities`: degree, then mention count, then id.
_COMMUNITY_MEMBERS = """
SELECT r.community, r.id, r.name, r.type, r.degree, r.mention_count FROM (
    SELECT e.community, e.id, e.name, et.name AS type, e.degree, e.mention_count,
           row_number() OVER (
               PARTITION BY e.community ORDER BY e.degree DESC, e.mention_count DESC, e.id
           ) AS rank
    FROM knowledge_entity AS e
    JOIN knowledge_entitytype AS et ON et.id = e.type_id
    WHERE e.workspace_id = %(ws)s AND e.state = 'active'
      AND e.community = ANY(%(communities)s::int[])
) AS r
WHERE r.rank <= %(top)s
ORDER BY r.community, r.rank
"""


@dataclass(frozen=True, slots=True)
class CommunityMember:
    id: int
    name: str
    type: str
    degree: int
    mention_count: int


@dataclass(frozen=True, slots=True)
class CommunitySummary:
    id: int
    size: int
    top: list[CommunityMember]


def community_summaries(
    *, workspace: Workspace, top: int = 5, limit: int | None = None
) -> list[CommunitySummary]:
    """The communities of the last `do_compute_communities` run, largest first (`limit` of
    them, None: all), each with its size and its `top` entities by degree (active relations,
    a self-loop once), then mention count, then id. Entities added since the run have no
    community yet and are not counted. Two queries, the second one pass over the
    workspace's relations."""
    active = Entity.objects.for_workspace(workspace).filter(
        state=EntityState.ACTIVE, community__isnull=False
    )
    sizes = [
        (community, size)
        for community, size in active.order_by()
        .values("community")
        .annotate(size=Count("pk"))
        .order_by("-size", "community")
        .values_list("community", "size")
        if community is not None
    ]
    if limit is not None:
        sizes = sizes[:limit]
    if not sizes or top < 1:
        return [CommunitySummary(id=c, size=n, top=[]) for c, n in sizes]
    # Degrees counted in one pass over the workspace's relations (per-entity counts took
    # 20 times longer when the communities hold most of a large graph).
    with connection.cursor() as cursor:
        cursor.execute(
            _COMMUNITY_MEMBERS,
            {"ws": workspace.pk, "communities": [c for c, _ in sizes], "top": top},
        )
        rows = cursor.fetchall()
    members: dict[int, list[CommunityMember]] = {}
    for community, pk, name, type_name, degree, mentions in rows:
        members.setdefault(community, []).append(
            CommunityMember(id=pk, name=name, type=type_name, degree=degree, mention_count=mentions)
        )
    return [CommunitySummary(id=c, size=n, top=members.get(c, [])) for c, n in sizes]
