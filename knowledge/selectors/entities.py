"""Entity reads behind the graph API, the explorer and the stats command: searches by name,
an entity's detail with its evidence, orphans.

Each function takes the workspace first and never reads another workspace's rows. Lists
are QuerySets (the degree is a column PostgreSQL keeps, see Entity.degree), so a page costs
the same number of queries whatever its length.
"""

from __future__ import annotations

from datetime import datetime
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
from knowledge.models import Alias, Entity, EntityState, Mention, Relation
from workspaces.models import Workspace
from workspaces.selectors import get_object_for_workspace

NameMatch = Literal["prefix", "contains"]
EntityOrder = Literal["name", "-degree", "-mention_count", "-last_seen_at"]


# The newest evidence rows shown with an entity or a relation.
MAX_EVIDENCE = 100


# Characters of context either side of a mention, and the longest snippet shown.
SNIPPET_CONTEXT = 120
SNIPPET_MAX = 400


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
