"""Reads behind the graph API and the stats command: entity and relation lists and details
with their evidence, graph payloads from the backend, and workspace statistics.

Each function takes the workspace first and never reads another workspace's rows. Lists
are QuerySets (the degree is a column PostgreSQL keeps, see Entity.degree), so a page costs
the same number of queries whatever its length. Traversals go to the graph
backend (knowledge/graph/), which answers from whatever store it keeps; this module only
checks that the ids asked about belong to the workspace and shapes the answer.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal

from django.db.models import (
    Case,
    Count,
    Exists,
    F,
    OuterRef,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.expressions import OrderBy

from ingest.models import Chunk, Document, Source
from knowledge.consolidation.names import canonical_key
from knowledge.graph import get_graph_backend
from knowledge.graph.base import MAX_HOPS, Direction, GraphResult, PathResult
from knowledge.models import Alias, Entity, EntityState, Mention, Relation, RelationEvidence
from workspaces.errors import InvalidInput, NotFound
from workspaces.models import Workspace
from workspaces.selectors import get_object_for_workspace

NameMatch = Literal["prefix", "contains"]
EntityOrder = Literal["name", "-degree", "-mention_count", "-last_seen_at"]

# Ids a subgraph request may name, and nodes a neighbourhood may return.
MAX_GRAPH_NODES = 2000
MAX_PATH_HOPS = 6
# The newest evidence rows shown with an entity or a relation.
MAX_EVIDENCE = 100
# Characters of context either side of a mention, and the longest snippet shown.
SNIPPET_CONTEXT = 120
SNIPPET_MAX = 400


# --- parsing of list parameters ------------------------------------------------------------


def parse_ids(text: str | None, *, label: str, limit: int = MAX_GRAPH_NODES) -> list[int]:
    """`1,2,3` -> [1, 2, 3] (order kept, duplicates dropped); InvalidInput names `label`."""
    if not text or not text.strip():
        return []
    ids: dict[int, None] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isascii() or not part.isdigit() or len(part) > 18:
            raise InvalidInput(f"{label}: comma-separated entity ids, got {part[:40]!r}.")
        ids[int(part)] = None
        if len(ids) > limit:
            raise InvalidInput(f"{label}: at most {limit} ids.")
    return list(ids)


def parse_names(text: str | None) -> list[str] | None:
    """`works_for,part_of` -> ["works_for", "part_of"]; empty or missing -> None (any)."""
    if text is None:
        return None
    names = [part.strip() for part in text.split(",") if part.strip()]
    return list(dict.fromkeys(names))[:100] or None


# --- entities -------------------------------------------------------------------------------


def _prefix(field: str, key: str) -> Q:
    """`field` starts with `key`, written as a range the btree index can scan (PostgreSQL
    turns LIKE 'key%' into one only under the C collation; the embedded server's is
    C.UTF-8) plus the LIKE itself, which keeps the answer exact under any collation."""
    condition = Q(**{f"{field}__gte": key, f"{field}__startswith": key})
    last = ord(key[-1]) + 1
    if last > 0x10FFFF:
        return condition
    if 0xD800 <= last <= 0xDFFF:  # surrogates are not characters
        last = 0xE000
    return condition & Q(**{f"{field}__lt": key[:-1] + chr(last)})


def _name_filter(workspace: Workspace, q: str, match: NameMatch) -> Q:
    """Prefix: the canonical key of `q` (case, accents, punctuation, articles folded as
    consolidation does) against the canonical names of entities and aliases — range scans
    of the (workspace, canonical_name) and (workspace, canonical) indexes. Contains: a
    case-insensitive substring of the name or an alias, which reads every name of the
    workspace (the embedded server has no pg_trgm for a trigram index)."""
    aliases = Alias.objects.for_workspace(workspace)
    key = canonical_key(q)[:300] if match == "prefix" else ""
    if key:
        # A UNION of two index range scans; an OR across the two tables would read
        # every entity of the workspace.
        by_name = (
            Entity.objects.for_workspace(workspace)
            .filter(_prefix("canonical_name", key))
            .order_by()
            .values("pk")
        )
        by_alias = aliases.filter(_prefix("canonical", key)).order_by().values("entity_id")
        return Q(pk__in=by_name.union(by_alias))
    return Q(name__icontains=q) | Q(pk__in=aliases.filter(name__icontains=q).values("entity_id"))


def search_entities(
    workspace: Workspace,
    *,
    q: str | None = None,
    match: NameMatch = "prefix",
    entity_type: str | None = None,
    source_id: int | None = None,
    seen_after: datetime | None = None,
    seen_before: datetime | None = None,
    min_degree: int | None = None,
    state: str = EntityState.ACTIVE,
    order: EntityOrder = "name",
) -> QuerySet[Entity]:
    """Entities of the workspace matching every filter given, with `degree`.

    `seen_after` / `seen_before` select entities seen at some time in the window: last
    seen at or after `seen_after`, first seen at or before `seen_before`."""
    entities = (
        Entity.objects.for_workspace(workspace)
        .filter(state=state)
        .select_related("type")
        .defer("embedding", "blocking_keys", "properties", "summary", "summary_hash")
    )
    if q is not None and q.strip():
        entities = entities.filter(_name_filter(workspace, q.strip()[:300], match))
    if entity_type:
        entities = entities.filter(type__name=entity_type)
    if source_id is not None:
        entities = entities.filter(source_ids__contains=[source_id])
    if seen_after is not None:
        entities = entities.filter(last_seen_at__gte=seen_after)
    if seen_before is not None:
        entities = entities.filter(first_seen_at__lte=seen_before)
    if min_degree is not None and min_degree > 0:
        entities = entities.filter(degree__gte=min_degree)
    orderings: dict[str, str | OrderBy] = {
        "name": "name",
        "-degree": F("degree").desc(),
        "-mention_count": "-mention_count",
        "-last_seen_at": F("last_seen_at").desc(nulls_last=True),
    }
    return entities.order_by(orderings[order], "pk")


def get_entity_with_type(workspace: Workspace, entity_id: object) -> Entity:
    return get_object_for_workspace(
        Entity.objects.select_related("type").defer("embedding"),
        workspace,
        entity_id,
        label="Entity",
    )


def _document_ref(document: Document) -> dict[str, Any]:
    path = document.path
    return {
        "id": document.pk,
        "title": document.title or path,
        "path": path,
        "url": path if path.startswith(("http://", "https://")) else None,
        "source_id": document.source_id,
    }


def _snippet(chunk: Chunk, start: int | None, end: int | None, *, context: int) -> tuple[str, int]:
    """The chunk text around document offsets [start, end) (clipped to the chunk), and the
    document offset the snippet starts at; the chunk's head when the place is unknown."""
    base, text = chunk.char_start, chunk.text
    if start is not None and end is not None:
        lo = max(start - context, base)
        hi = min(end + context, base + len(text), lo + SNIPPET_MAX)
        if lo < hi:
            return text[lo - base : hi - base], lo
    return text[: min(SNIPPET_MAX, 300)], base


_EVIDENCE_FIELDS = (
    "chunk__id",
    "chunk__text",
    "chunk__char_start",
    "chunk__document__id",
    "chunk__document__title",
    "chunk__document__path",
    "chunk__document__source_id",
)


def get_entity_detail(
    workspace: Workspace, entity_id: object, *, evidence_limit: int = 20
) -> dict[str, Any]:
    """Everything the explorer's entity panel shows, in a fixed number of queries: the
    entity, its sources, its relation counts by type and direction, and its newest
    mentions with the text around them."""
    entity = get_entity_with_type(workspace, entity_id)
    sources = (
        Source.objects.for_workspace(workspace)
        .filter(pk__in=entity.source_ids)
        .order_by("name", "pk")
        .values("id", "name", "kind")
    )
    # One grouped query; a self-loop counts once, as out (like degree).
    grouped = (
        Relation.objects.for_workspace(workspace)
        .filter(Q(source=entity) | Q(target=entity), state=EntityState.ACTIVE)
        .annotate(direction=Case(When(source=entity, then=Value("out")), default=Value("in")))
        .order_by()
        .values("type__name", "direction")
        .annotate(n=Count("pk"))
    )
    counts = sorted(
        (
            {"type": row["type__name"], "direction": row["direction"], "count": row["n"]}
            for row in grouped
        ),
        key=lambda row: (-row["count"], row["type"], row["direction"]),
    )
    mentions = (
        Mention.objects.for_workspace(workspace)
        .filter(entity=entity)
        .select_related("chunk__document")
        .only(
            "id",
            "surface_form",
            "char_start",
            "char_end",
            "description",
            "created_at",
            *_EVIDENCE_FIELDS,
        )
        .order_by("-created_at", "-pk")[: max(0, min(evidence_limit, MAX_EVIDENCE))]
    )
    evidence = []
    for mention in mentions:
        snippet, snippet_start = _snippet(
            mention.chunk, mention.char_start, mention.char_end, context=SNIPPET_CONTEXT
        )
        evidence.append(
            {
                "id": mention.pk,
                "chunk_id": mention.chunk_id,
                "document": _document_ref(mention.chunk.document),
                "surface_form": mention.surface_form,
                "char_start": mention.char_start,
                "char_end": mention.char_end,
                "snippet": snippet,
                "snippet_start": snippet_start,
                "description": mention.description,
                "created_at": mention.created_at,
            }
        )
    return {
        "id": entity.pk,
        "name": entity.name,
        "type": entity.type.name,
        "description": entity.description,
        "summary": entity.summary,
        "aliases": list(entity.aliases or []),
        "type_votes": dict(entity.type_votes or {}),
        "type_curated": entity.type_curated,
        "mention_count": entity.mention_count,
        "degree": entity.degree,
        "community": entity.community,
        "first_seen_at": entity.first_seen_at,
        "last_seen_at": entity.last_seen_at,
        "state": entity.state,
        "merged_into": entity.merged_into_id,
        "curated": entity.curated,
        "sources": list(sources),
        "relation_counts": counts,
        "evidence": evidence,
    }


def get_orphan_entities(workspace: Workspace) -> QuerySet[Entity]:
    """Active entities without a single mention (curated ones stay when their evidence
    goes; everything else normally goes with it)."""
    return (
        Entity.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE)
        .filter(~Exists(Mention.objects.filter(entity=OuterRef("pk"))))
        .select_related("type")
        .order_by("name", "pk")
    )


# --- relations ------------------------------------------------------------------------------


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


# --- graph queries through the backend --------------------------------------------------------


def graph_out(result: GraphResult) -> dict[str, Any]:
    return {
        "nodes": [asdict(node) for node in result.nodes],
        "edges": [asdict(edge) for edge in result.edges],
        "truncated": result.truncated,
    }


def path_out(result: PathResult | None) -> dict[str, Any]:
    if result is None:
        return {"nodes": [], "edges": [], "truncated": False, "found": False, "length": None}
    return {
        "nodes": [asdict(node) for node in result.nodes],
        "edges": [asdict(edge) for edge in result.edges],
        "truncated": False,
        "found": True,
        "length": result.length,
    }


def get_neighborhood(
    workspace: Workspace,
    entity_id: object,
    *,
    hops: int = 1,
    relation_types: list[str] | None = None,
    entity_types: list[str] | None = None,
    direction: Direction = "both",
    limit: int = 500,
) -> dict[str, Any]:
    """The graph payload around one entity of the workspace (404 for anyone else's)."""
    entity = get_object_for_workspace(
        Entity.objects.only("id"), workspace, entity_id, label="Entity"
    )
    if not 1 <= hops <= MAX_HOPS:
        raise InvalidInput(f"hops: 1 to {MAX_HOPS}.")
    result = get_graph_backend().neighborhood(
        workspace_id=workspace.pk,
        seeds=[entity.pk],
        hops=hops,
        relation_types=relation_types,
        entity_types=entity_types,
        direction=direction,
        limit=max(1, min(limit, MAX_GRAPH_NODES)),
    )
    return graph_out(result)


def get_path(
    workspace: Workspace,
    *,
    source_id: int,
    target_id: int,
    max_hops: int = 4,
    relation_types: list[str] | None = None,
) -> dict[str, Any]:
    """A shortest path between two entities of the workspace; `found` false when there is
    none within `max_hops` (an answer, not an error). Either end missing: NotFound."""
    ends = {
        e.pk
        for e in Entity.objects.for_workspace(workspace)
        .filter(pk__in=[source_id, target_id])
        .only("id")
    }
    for label, pk in (("from", source_id), ("to", target_id)):
        if pk not in ends:
            raise NotFound(f"Entity {pk} ({label}) not found.")
    result = get_graph_backend().shortest_path(
        workspace_id=workspace.pk,
        source=source_id,
        target=target_id,
        max_hops=max(1, min(max_hops, MAX_PATH_HOPS)),
        relation_types=relation_types,
    )
    return path_out(result)


def get_subgraph(workspace: Workspace, ids: list[int]) -> dict[str, Any]:
    """The given entities (those active in the workspace; others are left out, as if
    missing) and the active edges among them."""
    if len(ids) > MAX_GRAPH_NODES:
        raise InvalidInput(f"ids: at most {MAX_GRAPH_NODES}.")
    if not ids:
        return graph_out(GraphResult())
    return graph_out(get_graph_backend().subgraph(workspace_id=workspace.pk, ids=ids))


def get_hubs(
    workspace: Workspace, *, entity_type: str | None = None, limit: int = 20, offset: int = 0
) -> dict[str, Any]:
    """The best-connected entities, highest degree first, a page of them; `count` is every
    active entity of the type (so a client knows how far it may page)."""
    nodes = get_graph_backend().hubs(
        workspace_id=workspace.pk, entity_type=entity_type or None, limit=offset + limit
    )
    entities = Entity.objects.for_workspace(workspace).filter(state=EntityState.ACTIVE)
    if entity_type:
        entities = entities.filter(type__name=entity_type)
    return {
        "items": [asdict(node) for node in nodes[offset : offset + limit]],
        "count": entities.count(),
    }


# --- statistics -----------------------------------------------------------------------------


def get_workspace_stats(workspace: Workspace) -> dict[str, Any]:
    """The backend's graph statistics and the counts of what the graph was built from."""
    backend = get_graph_backend()
    stats = backend.stats(workspace_id=workspace.pk)
    counts = {
        "sources": Source.objects.for_workspace(workspace).count(),
        "documents": Document.objects.for_workspace(workspace).count(),
        "chunks": Chunk.objects.for_workspace(workspace).count(),
        "mentions": Mention.objects.for_workspace(workspace).count(),
        "relation_evidence": RelationEvidence.objects.for_workspace(workspace).count(),
        "orphan_entities": get_orphan_entities(workspace).count(),
    }
    return {"backend": backend.alias, **asdict(stats), "counts": counts}


# --- the explorer's bulk loads ----------------------------------------------------------

# Nodes one bulk load may return. The explorer has no cap of its own: it loads more by
# expanding, and can ask again for more hubs; this bounds the work of one request.
MAX_BULK_NODES = 20_000
DEFAULT_HUBS = 150


def _day(value: str | None, *, label: str, end: bool) -> datetime | None:
    """`YYYY-MM-DD` (or a full ISO 8601 time) to an aware time; a bare day `before` means
    up to the end of that day, so a one-day range finds that day's entities."""
    if not value:
        return None
    try:
        if len(value) == 10:
            day = date.fromisoformat(value)
            moment = datetime.combine(day, time.min, tzinfo=UTC)
            return moment + timedelta(days=1, microseconds=-1) if end else moment
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInput(f"{label}: a date like 2026-01-31.") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _number(value: Any, *, label: str, low: int, high: int) -> int | None:
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"{label}: a whole number.") from None
    if not low <= number <= high:
        raise InvalidInput(f"{label}: {low} to {high}.")
    return number


def _id_list(value: Any, *, label: str) -> list[int]:
    if value is None:
        return []
    if isinstance(value, str):
        return parse_ids(value, label=label, limit=MAX_BULK_NODES)
    if not isinstance(value, list) or len(value) > MAX_BULK_NODES:
        raise InvalidInput(f"{label}: a list of at most {MAX_BULK_NODES} entity ids.")
    if not all(isinstance(i, int) and not isinstance(i, bool) and 0 < i < 2**63 for i in value):
        raise InvalidInput(f"{label}: entity ids (positive whole numbers).")
    return list(dict.fromkeys(value))


def _names(value: Any) -> list[str] | None:
    if isinstance(value, list):
        value = ",".join(str(v) for v in value)
    return parse_names(value) if isinstance(value, str) else None


def get_bulk_graph(workspace: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    """The explorer's bulk loads (explorer/graph_views.graph_json): the graph payload
    (nodes, edges among them, truncated) plus `count`, from raw request parameters.

    `hubs`: the N best-connected active entities matching the filters (count: how many
    match in all). `ids`: those of the given entities that are active and match the
    filters (count: how many); with `touching`, only the edges with an end among those;
    with `edges` false, only which of them match (`{"id"}` nodes, no edges, no traversal).
    Filters: `types` (entity type names), `source` (a source id), `seen_after` /
    `seen_before` (seen at some time in the range), `min_degree`."""
    types = _names(params.get("types"))
    source = _number(params.get("source"), label="source", low=1, high=2**63 - 1)
    after = _day(params.get("seen_after"), label="seen_after", end=False)
    before = _day(params.get("seen_before"), label="seen_before", end=True)
    min_degree = _number(params.get("min_degree"), label="min_degree", low=0, high=10**9)
    filtered = bool(types or source or after or before or min_degree)
    entities = search_entities(
        workspace,
        source_id=source,
        seen_after=after,
        seen_before=before,
        min_degree=min_degree,
        order="-degree",
    )
    if types:
        entities = entities.filter(type__name__in=types)
    backend = get_graph_backend()
    if params.get("ids") is not None:
        asked = _id_list(params.get("ids"), label="ids")
        ids = (
            list(entities.filter(pk__in=asked).values_list("pk", flat=True))
            if (filtered or params.get("edges") is False) and asked
            else asked
        )
        count = None
    else:
        limit = _number(params.get("hubs"), label="hubs", low=0, high=MAX_BULK_NODES)
        limit = DEFAULT_HUBS if limit is None else limit
        if filtered:
            ids = list(entities.values_list("pk", flat=True)[:limit])
        else:
            ids = [n.id for n in backend.hubs(workspace_id=workspace.pk, limit=limit)]
        count = entities.count() if len(ids) >= limit else len(ids)
    if params.get("edges") is False:
        return {
            "nodes": [{"id": i} for i in ids],
            "edges": [],
            "truncated": False,
            "count": len(ids),
        }
    result = backend.subgraph(workspace_id=workspace.pk, ids=ids) if ids else None
    payload = graph_out(result) if result is not None else {"nodes": [], "edges": []}
    touching = set(_id_list(params.get("touching"), label="touching"))
    if touching:
        payload["edges"] = [
            e for e in payload["edges"] if e["source"] in touching or e["target"] in touching
        ]
    for node in payload["nodes"]:
        node.pop("depth", None)  # always null here; the client reads a missing key alike
    payload["count"] = len(payload["nodes"]) if count is None else count
    payload["truncated"] = payload["count"] > len(payload["nodes"])
    return payload
