"""The quality report of a workspace's graph, or of what one source contributed to it: the
figures that tell a useful graph from a noisy one, and the names most likely to be noise.

Figures (each a count out of a total, and the share):
- entities seen in two or more chunks (an entity met once is more likely noise);
- singletons: entities with exactly one mention;
- orphans: entities with no active relation (for a source: none evidenced by its chunks);
- entities per 1,000 words of the text extraction read (chunks marked boilerplate are never
  extracted, so their words do not count; the overlap chunks repeat is counted once);
- typed relations: relations whose type says more than the fallback "related_to";
- boilerplate skipped: chunks marked boilerplate (site navigation, footers) among all;
- suspicious names: active entities whose name the extractor's noise filter nearly
  rejected (`knowledge.extraction.noise.near_miss`, which says why), most mentioned first,
  so a person can delete or block them.

Scope: the workspace's active entities and relations; with a source, the active entities its
chunks mention (mentions counted in its chunks only) and the active relations its chunks
evidence. Each figure is one aggregate query; nothing is loaded row by row except the
suspicious-name scan, which reads names in order of mentions and stops at the limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from django.db import connection

from ingest.models import Chunk, Document, Source
from knowledge.extraction.noise import near_miss
from knowledge.extraction.parsing import DEFAULT_RELATION_TYPE
from knowledge.models import (
    Entity,
    EntityState,
    EntityType,
    Mention,
    Relation,
    RelationEvidence,
    RelationType,
)
from workspaces.models import Workspace

MAX_SUSPICIOUS = 20
# The suspicious-name scan reads at most this many names (the most mentioned first): a
# bound on the report's cost in a very large graph, far beyond what a person reviews.
SUSPICIOUS_SCAN_LIMIT = 50_000
SCAN_BATCH = 2000
# A word, as the report counts them: a run of non-space characters with a letter or digit
# in it (Markdown's "#", "-" and "|" are not words).
WORD_PATTERN = r"\S*[[:alnum:]]\S*"

_near_miss = lru_cache(maxsize=65_536)(near_miss)


def share(count: int, total: int) -> dict[str, Any]:
    """A figure: `count` out of `total`, and the share (None when there is nothing)."""
    return {"count": count, "total": total, "share": round(count / total, 4) if total else None}


def get_quality_report(
    workspace: Workspace, *, source: Source | None = None, suspicious: int = MAX_SUSPICIOUS
) -> dict[str, Any]:
    """The report of the workspace (or of `source`, which must be the workspace's: callers
    look it up with `get_source_for_workspace`), as the API answers it."""
    source_id = source.pk if source is not None else None
    entities = _entity_figures(workspace.pk, source_id)
    relations, typed = _relation_figures(workspace.pk, source_id)
    chunks, boilerplate, words = _chunk_figures(workspace.pk, source_id)
    return {
        "workspace": workspace.slug,
        "source": {"id": source.pk, "name": source.name} if source is not None else None,
        "entities": entities["entities"],
        "mentions": entities["mentions"],
        "relations": relations,
        "chunks": chunks,
        "words": words,
        "in_two_or_more_chunks": share(entities["multi_chunk"], entities["entities"]),
        "singletons": share(entities["singletons"], entities["entities"]),
        "orphans": share(entities["orphans"], entities["entities"]),
        "entities_per_1000_words": (
            round(entities["entities"] * 1000 / words, 2) if words else None
        ),
        "typed_relations": share(typed, relations),
        "boilerplate_chunks": share(boilerplate, chunks),
        "suspicious": get_suspicious_names(workspace, source=source, limit=suspicious),
    }


def _tables() -> dict[str, str]:
    return {
        "entity": Entity._meta.db_table,
        "mention": Mention._meta.db_table,
        "relation": Relation._meta.db_table,
        "evidence": RelationEvidence._meta.db_table,
        "relation_type": RelationType._meta.db_table,
        "entity_type": EntityType._meta.db_table,
        "chunk": Chunk._meta.db_table,
        "document": Document._meta.db_table,
    }


# The queries, with the tables' names as {placeholders} and the values as parameters. With a
# source, `scoped` is its chunks: its documents' chunks in the workspace.
_SCOPED = """scoped AS (
        SELECT c.id FROM {chunk} c JOIN {document} d ON d.id = c.document_id
        WHERE c.workspace_id = %(ws)s AND d.source_id = %(source)s
    )"""

# Every active entity (curated ones without evidence too); `degree` is the stored count of
# its active relations (kept by triggers), so an orphan is degree 0.
_WORKSPACE_ENTITIES = """
    WITH per AS (
        SELECT m.entity_id, count(*) AS mentions, count(DISTINCT m.chunk_id) AS chunks
        FROM {mention} m WHERE m.workspace_id = %(ws)s GROUP BY m.entity_id
    )
    SELECT count(*), sum(per.mentions),
           count(*) FILTER (WHERE per.chunks >= 2),
           count(*) FILTER (WHERE per.mentions = 1),
           count(*) FILTER (WHERE e.degree = 0)
    FROM {entity} e LEFT JOIN per ON per.entity_id = e.id
    WHERE e.workspace_id = %(ws)s AND e.state = %(active)s
"""

# The active entities the source's chunks mention; an orphan has no active relation that
# its chunks evidence.
_SOURCE_ENTITIES = """
    WITH {scoped},
    per AS (
        SELECT m.entity_id, count(*) AS mentions, count(DISTINCT m.chunk_id) AS chunks
        FROM {mention} m
        WHERE m.workspace_id = %(ws)s AND m.chunk_id IN (SELECT id FROM scoped)
        GROUP BY m.entity_id
    ),
    related AS (
        SELECT DISTINCT unnest(ARRAY[r.source_id, r.target_id]) AS entity_id
        FROM {relation} r
        WHERE r.workspace_id = %(ws)s AND r.state = %(active)s AND EXISTS (
            SELECT 1 FROM {evidence} ev
            WHERE ev.relation_id = r.id AND ev.chunk_id IN (SELECT id FROM scoped))
    )
    SELECT count(*), sum(per.mentions),
           count(*) FILTER (WHERE per.chunks >= 2),
           count(*) FILTER (WHERE per.mentions = 1),
           count(*) FILTER (WHERE related.entity_id IS NULL)
    FROM per JOIN {entity} e ON e.id = per.entity_id AND e.state = %(active)s
    LEFT JOIN related ON related.entity_id = e.id
"""

_WORKSPACE_RELATIONS = """
    SELECT count(*), count(*) FILTER (WHERE t.name <> %(untyped)s)
    FROM {relation} r JOIN {relation_type} t ON t.id = r.type_id
    WHERE r.workspace_id = %(ws)s AND r.state = %(active)s
"""

_SOURCE_RELATIONS = """
    WITH {scoped}
    SELECT count(*), count(*) FILTER (WHERE t.name <> %(untyped)s)
    FROM {relation} r JOIN {relation_type} t ON t.id = r.type_id
    WHERE r.workspace_id = %(ws)s AND r.state = %(active)s AND EXISTS (
        SELECT 1 FROM {evidence} ev
        WHERE ev.relation_id = r.id AND ev.chunk_id IN (SELECT id FROM scoped))
"""

# A chunk repeats the end of the one before it (the chunker's overlap): only its text after
# that chunk's end counts.
_CHUNKS = """
    SELECT count(*), count(*) FILTER (WHERE boilerplate),
           sum(regexp_count(
               substr(text, 1 + greatest(previous_end - char_start, 0)), %(word)s
           )) FILTER (WHERE NOT boilerplate)
    FROM (
        SELECT c.text, c.char_start, c.boilerplate,
               lag(c.char_end) OVER (PARTITION BY c.document_id ORDER BY c.ordinal)
                   AS previous_end
        FROM {chunk} c {source_join}
        WHERE c.workspace_id = %(ws)s
    ) AS chunks
"""
_SOURCE_JOIN = "JOIN {document} d ON d.id = c.document_id AND d.source_id = %(source)s"


def _fetch(sql: str, *, workspace_id: int, source_id: int | None) -> tuple[int, ...]:
    """The one row of `sql` (its tables named; `{scoped}` and `{source_join}` the source's
    chunks), nulls as 0."""
    tables = _tables()
    join = _SOURCE_JOIN.format(**tables) if source_id is not None else ""
    sql = sql.format(scoped=_SCOPED.format(**tables), source_join=join, **tables)
    params = {
        "ws": workspace_id,
        "source": source_id,
        "active": EntityState.ACTIVE,
        "untyped": DEFAULT_RELATION_TYPE,
        "word": WORD_PATTERN,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return tuple(int(value or 0) for value in row)


def _entity_figures(workspace_id: int, source_id: int | None) -> dict[str, int]:
    """Entities in scope, their mentions, and how many are seen in 2+ chunks, once, or in
    no relation — one query."""
    sql = _WORKSPACE_ENTITIES if source_id is None else _SOURCE_ENTITIES
    entities, mentions, multi_chunk, singletons, orphans = _fetch(
        sql, workspace_id=workspace_id, source_id=source_id
    )
    return {
        "entities": entities,
        "mentions": mentions,
        "multi_chunk": multi_chunk,
        "singletons": singletons,
        "orphans": orphans,
    }


def _relation_figures(workspace_id: int, source_id: int | None) -> tuple[int, int]:
    """(relations in scope, those whose type is not the fallback "related_to")."""
    sql = _WORKSPACE_RELATIONS if source_id is None else _SOURCE_RELATIONS
    relations, typed = _fetch(sql, workspace_id=workspace_id, source_id=source_id)
    return relations, typed


def _chunk_figures(workspace_id: int, source_id: int | None) -> tuple[int, int, int]:
    """(chunks, chunks marked boilerplate, words of the others)."""
    chunks, boilerplate, words = _fetch(_CHUNKS, workspace_id=workspace_id, source_id=source_id)
    return chunks, boilerplate, words


def suspicion(name: str) -> str | None:
    """Why the name looks like noise although the extractor let it through, or None."""
    return _near_miss(name)


def get_suspicious_names(
    workspace: Workspace, *, source: Source | None = None, limit: int = MAX_SUSPICIOUS
) -> list[dict[str, Any]]:
    """Up to `limit` active entities whose name `near_miss` flags, most mentioned first
    (mentions in the source's chunks, with a source; then oldest), each as {id, name, type,
    state, mentions, reason}."""
    found: list[dict[str, Any]] = []
    if limit <= 0:
        return found
    for row in _most_mentioned(workspace, source):
        reason = suspicion(row[1])
        if reason is not None:
            found.append(_named(row, reason))
            if len(found) >= limit:
                break
    return found


def get_suspicious_name(
    workspace: Workspace, entity_id: int, *, source: Source | None = None
) -> dict[str, Any] | None:
    """One entity as the suspicious-name list shows it, in any state (a deleted one shows
    what undo brings back), its reason None when its name is no near miss; None when the
    workspace has no such entity, or the source does not mention it."""
    row = (
        Entity.objects.for_workspace(workspace)
        .filter(pk=entity_id)
        .values_list("id", "name", "type__name", "state", "mention_count")
        .first()
    )
    if row is None:
        return None
    if source is not None:
        mentions = Mention.objects.filter(entity_id=entity_id, chunk__document__source=source)
        row = (*row[:4], mentions.count())
        if not row[4]:
            return None
    return _named(row, suspicion(row[1]))


def _named(row: tuple[Any, ...], reason: str | None) -> dict[str, Any]:
    entity_id, name, type_name, state, mentions = row
    return {"id": entity_id, "name": name, "type": type_name, "state": state,
            "mentions": mentions, "reason": reason}  # fmt: skip


# A source's active entities by their mentions in its chunks: counted per entity first,
# then joined to the names (grouping by the names would sort every name).
_SOURCE_NAMES = """
    SELECT e.id, e.name, t.name, e.state, per.mentions
    FROM (
        SELECT m.entity_id, count(*) AS mentions
        FROM {mention} m
        JOIN {chunk} c ON c.id = m.chunk_id
        JOIN {document} d ON d.id = c.document_id
        WHERE m.workspace_id = %(ws)s AND d.source_id = %(source)s
        GROUP BY m.entity_id
    ) AS per
    JOIN {entity} e ON e.id = per.entity_id AND e.state = %(active)s
    JOIN {entity_type} t ON t.id = e.type_id
    ORDER BY per.mentions DESC, e.id
    LIMIT %(limit)s
"""


def _most_mentioned(workspace: Workspace, source: Source | None) -> Iterator[tuple[Any, ...]]:
    """(id, name, type name, state, mentions) of the scope's active entities, most mentioned
    first (then oldest), at most SUSPICIOUS_SCAN_LIMIT, read a batch at a time (server-side
    cursors), so a scan that stops early reads little."""
    if source is None:
        yield from (
            Entity.objects.for_workspace(workspace)
            .filter(state=EntityState.ACTIVE)
            .order_by("-mention_count", "id")
            .values_list("id", "name", "type__name", "state", "mention_count")[
                :SUSPICIOUS_SCAN_LIMIT
            ]
            .iterator(chunk_size=SCAN_BATCH)
        )
        return
    params: dict[str, int | str] = {
        "ws": workspace.pk,
        "source": source.pk,
        "active": EntityState.ACTIVE,
        "limit": SUSPICIOUS_SCAN_LIMIT,
    }
    with connection.chunked_cursor() as cursor:
        cursor.execute(_SOURCE_NAMES.format(**_tables()), params)
        while rows := cursor.fetchmany(SCAN_BATCH):
            yield from rows


MAX_BOILERPLATE_SAMPLES = 10
BOILERPLATE_SAMPLE_CHARS = 200

# The source's boilerplate chunks by their text: each distinct text once, with how many
# documents hold it, the most widespread first.
_BOILERPLATE_SAMPLES = """
    SELECT left(min(c.text), %(chars)s), count(DISTINCT c.document_id) AS documents
    FROM {chunk} c JOIN {document} d ON d.id = c.document_id
    WHERE c.workspace_id = %(ws)s AND d.source_id = %(source)s AND c.boilerplate
    GROUP BY c.content_hash
    ORDER BY documents DESC, 1
    LIMIT %(limit)s
"""


def get_boilerplate_samples(
    workspace: Workspace, source: Source, *, limit: int = MAX_BOILERPLATE_SAMPLES
) -> list[dict[str, Any]]:
    """What the source's boilerplate is (ingest/boilerplate.py: text its documents repeat,
    kept but never extracted nor searched): up to `limit` distinct texts of its boilerplate
    chunks, each cut to BOILERPLATE_SAMPLE_CHARS, with the documents holding it, as
    {text, documents}."""
    params = {
        "ws": workspace.pk,
        "source": source.pk,
        "chars": BOILERPLATE_SAMPLE_CHARS,
        "limit": limit,
    }
    with connection.cursor() as cursor:
        cursor.execute(_BOILERPLATE_SAMPLES.format(**_tables()), params)
        return [{"text": text, "documents": documents} for text, documents in cursor.fetchall()]
