"""Reads of entity resolution: the candidates an extracted name may be (blocked GIN lookups,
the nearest name embedding), the pins and votes that decide it, whether a person said two
entities are not the same, and why one entity was merged into another (`why_merged`, the
one entry point for that question). The rules that pick among the candidates are
knowledge/consolidation/decide.py's; this module only asks the database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q

from ingest.embeddings import vector_literal
from ingest.selectors import walk_ef_search
from knowledge.consolidation import decide
from knowledge.consolidation.keys import entity_blocking_keys
from knowledge.consolidation.matching import EMBEDDING_REASON, Key, Match, untyped_twin
from knowledge.consolidation.names.code_names import code_paths_differ
from knowledge.consolidation.names.similarity import Similarity
from knowledge.consolidation.text_names import name_keys
from knowledge.extraction.entity_types import FALLBACK_TYPE
from knowledge.models import (
    ENTITY_VECTORS,
    Alias,
    CurationAction,
    CurationEvent,
    CurationRule,
    Entity,
    EntityState,
    EntityType,
    Mention,
    RuleKind,
)
from knowledge.selectors.match_evidence import WorkspaceEvidence
from workspaces.models import Workspace


def follow_pin(entity_id: int, entities: dict[int, Entity]) -> Entity | None:
    """The active entity a (possibly merged) entity now lives in."""
    seen: set[int] = set()
    current = entities.get(entity_id)
    while current is not None and current.state == EntityState.MERGED and current.merged_into_id:
        if current.pk in seen:
            return None
        seen.add(current.pk)
        current = (
            entities.get(current.merged_into_id)
            or Entity.objects.filter(pk=current.merged_into_id).first()
        )
    if current is None or current.state != EntityState.ACTIVE:
        return None
    return current


def voted_entity(key: Key, entity_type: EntityType, by_id: dict[int, Entity]) -> Entity | None:
    """The active entity of the name whose evidence already voted for this type: once the
    majority retyped an entity, the minority's later mentions still land on it."""
    for entity in by_id.values():
        if (
            entity.state == EntityState.ACTIVE
            and entity.canonical_name == key[0]
            and entity.type_id != key[1]
            and (entity.type_votes or {}).get(entity_type.name)
        ):
            return entity
    return None


# Rows the HNSW walk fetches for the one nearest name: an iterative scan in relaxed order
# returns rows nearly, not exactly, closest first, so the best of a few is taken.
NEAREST_FETCH = 10
# The walk's candidate list (pgvector's default is 40): in a 200k-name database the big
# tenant's nearest name of the type was found 88% of the time with 40, 99% with 100
# (bench/vector_recall.py).
NEAREST_EF_SEARCH = 100


def nearest_by_embedding(
    workspace: Workspace, entity_type: EntityType, vector: list[float], *, model: str
) -> Match | None:
    """The active entity of the type whose name embedding is closest (see
    `nearest_by_embeddings`)."""
    return nearest_by_embeddings(workspace, [(entity_type, vector)], model=model)[0]


def nearest_by_embeddings(
    workspace: Workspace, wanted: Sequence[tuple[EntityType, list[float]]], *, model: str
) -> list[Match | None]:
    """For each (type, name vector), in the order asked: the active entity of the type
    whose name embedding is closest (cosine), when at least CONSOLIDATION_EMBEDDING_REVIEW
    similar: a candidate for review only.

    The name index (HNSW) is shared by every workspace and type, and a walk of it drops
    the others' rows; without an iterative scan it reads 40 names and keeps those of the
    type and workspace, if any: in a 200k-name database of 50 workspaces the big tenant's
    nearest name of the type was missed 12% of the time (bench/vector_recall.py). As for
    search (knowledge/retrieval/signals/vector.py): a type with at most
    VECTOR_EXACT_MAX_ROWS active names here is compared exactly (every vector of the type
    in one statement), a larger one walks the index (iterative scan, at most
    VECTOR_MAX_SCAN_TUPLES vectors) and is compared exactly if that came back short."""
    rows: list[list[tuple[int, float]]] = [[] for _ in wanted]
    by_type: dict[int, list[int]] = {}
    for position, (entity_type, _) in enumerate(wanted):
        by_type.setdefault(entity_type.pk, []).append(position)
    with transaction.atomic(), connection.cursor() as cursor:
        for type_id, positions in by_type.items():
            vectors = [wanted[p][1] for p in positions]
            found = _nearest_rows(cursor, workspace, type_id, vectors, model=model)
            for position, type_rows in zip(positions, found, strict=True):
                rows[position] = type_rows
    best = [min(r, key=lambda row: (row[1], row[0]), default=None) for r in rows]
    close = {b[0] for b in best if b and 1 - float(b[1]) >= settings.CONSOLIDATION_EMBEDDING_REVIEW}
    entities = Entity.objects.in_bulk(close)
    matches: list[Match | None] = []
    for found_best in best:
        entity = entities.get(found_best[0]) if found_best else None
        if found_best is None or entity is None or found_best[0] not in close:
            matches.append(None)
            continue
        similarity = 1 - float(found_best[1])
        matches.append(
            decide.Decision(entity, Similarity(
                score=round(similarity, 4), reasons=(f"{EMBEDDING_REASON} {similarity:.2f}",)
            ), decide.Rule.EMBEDDING)
        )  # fmt: skip
    return matches


def _nearest_rows(
    cursor: Any, workspace: Workspace, type_id: int, vectors: list[list[float]], *, model: str
) -> list[list[tuple[int, float]]]:
    """The NEAREST_FETCH closest (id, distance) of the type for each vector, in a
    transaction: exactly for a type of at most VECTOR_EXACT_MAX_ROWS active names, else by
    the index walk, redone exactly for a vector whose walk came back short."""
    dim = len(vectors[0])
    table = Entity._meta.db_table
    literals = [vector_literal(vector) for vector in vectors]

    def query(exact: bool, wanted: list[str]) -> tuple[str, list[Any]]:
        # Exact: the type's vectors are read once (a materialised CTE) and every name is
        # compared with all of them; reading them from the table per name cost a heap
        # fetch per name and vector, a window's names times the type's. The walk: the cast
        # is the expression of the partial index entity_embedding_hnsw_<dim>.
        rows = f"""
            SELECT id, {"embedding" if exact else f"(embedding::vector({dim}))"} AS vector
            FROM {table}
            WHERE workspace_id = %s AND type_id = %s AND state = 'active'
              AND embedding_dim = {dim} AND embedding_model = %s
        """  # noqa: S608 (table name and dimension are ours; values are parameters)
        return (
            f"""
            WITH names AS {"MATERIALIZED" if exact else "NOT MATERIALIZED"} ({rows})
            SELECT q.position, n.id, n.distance
            FROM unnest(%s::vector({dim})[]) WITH ORDINALITY AS q(vector, position)
            CROSS JOIN LATERAL (
                SELECT id, vector <=> q.vector AS distance FROM names
                ORDER BY distance LIMIT %s
            ) AS n
            """,  # noqa: S608 (as above)
            [workspace.pk, type_id, model, wanted, NEAREST_FETCH],
        )

    # One statement: this transaction's index walk (an older pgvector ignores the
    # settings; its short answers are redone exactly below) and the active names of the
    # type, counted on its unique index up to the bound only.
    bound = settings.VECTOR_EXACT_MAX_ROWS
    # A workspace's own index of its names (knowledge/hooks.py) is walked with the longer
    # candidate list its rows alone need (ingest/actions/vector_indexes.py).
    ef_search = walk_ef_search(
        ENTITY_VECTORS, workspace_id=workspace.pk, dimension=dim, shared=NEAREST_EF_SEARCH
    )
    cursor.execute(
        "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "  # noqa: S608
        "set_config('hnsw.max_scan_tuples', %s, true), "
        "set_config('hnsw.ef_search', %s, true), "
        f"(SELECT count(*) FROM (SELECT 1 FROM {table} WHERE workspace_id = %s "
        "AND type_id = %s AND state = 'active' LIMIT %s) AS s)",
        [str(settings.VECTOR_MAX_SCAN_TUPLES), str(ef_search), workspace.pk, type_id,
         bound + 1],
    )  # fmt: skip
    found: list[list[tuple[int, float]]] = [[] for _ in vectors]
    if int(cursor.fetchone()[-1]) > bound:
        cursor.execute(*query(False, literals))
        for position, entity_id, distance in cursor.fetchall():
            found[position - 1].append((entity_id, distance))
    short = [i for i, rows in enumerate(found) if len(rows) < NEAREST_FETCH]
    if short:
        cursor.execute(*query(True, [literals[i] for i in short]))
        redone: list[list[tuple[int, float]]] = [[] for _ in short]
        for position, entity_id, distance in cursor.fetchall():
            redone[position - 1].append((entity_id, distance))
        for index, rows in zip(short, redone, strict=True):
            found[index] = rows
    return found


def best_match(
    workspace: Workspace, name: str, entity_type: EntityType, *, exclude: int | None = None
) -> Match | None:
    """The most similar active entity of the type among those sharing a blocking key (see
    `best_matches`)."""
    return best_matches(workspace, [(name, entity_type)], exclude=exclude)[0]


def best_matches(
    workspace: Workspace,
    wanted: Sequence[tuple[str, EntityType]],
    *,
    exclude: int | None = None,
) -> list[Match | None]:
    """For each (name, type), the active entity of the type among those sharing a blocking
    key that the match rules pick (`decide.best_match`), in the order asked.

    Candidates come from `_candidates` (one query for every name: a window's new names cost
    one round trip, not one each); the rules ask the workspace's evidence
    (`WorkspaceEvidence`) only for the few names they cannot decide by their letters.
    """
    keys = [entity_blocking_keys(name, entity_type.name) for name, entity_type in wanted]
    found = _candidates(workspace, [(t, k) for (_, t), k in zip(wanted, keys, strict=True)],
                        exclude=exclude)  # fmt: skip
    evidence = WorkspaceEvidence(workspace)
    return [
        decide.best_match(name, entity_type.name, name_keys, found.get(position, []), evidence)
        for position, ((name, entity_type), name_keys) in enumerate(zip(wanted, keys, strict=True))
    ]


def _candidates(
    workspace: Workspace,
    wanted: Sequence[tuple[EntityType, list[str]]],
    *,
    exclude: int | None,
) -> dict[int, list[Entity]]:
    """For each (type, blocking keys) asked, by position: the active entities of the type
    sharing a key, at most CONSOLIDATION_MAX_CANDIDATES in all (those found through the
    name's rarest keys first: migration knowledge/0024) and half of that per key,
    one GIN lookup per key, every name in a single query. Capping each key,
    not the union, keeps the cost flat as the graph grows: a common word ("Smith",
    "Systems") is in thousands of names, and reading all of them to pick the best-known few
    was the one cost that grew with the graph. The rare keys (the full name, its rarer
    words and their ends) come back whole, and those are the ones a variant or a typo
    shares with its entity."""
    positions: list[int] = []
    type_ids: list[int] = []
    scoped: list[str] = []
    for position, (entity_type, keys) in enumerate(wanted):
        for key in keys:
            positions.append(position)
            type_ids.append(entity_type.pk)
            scoped.append(f"{entity_type.pk}:{key}")
    if not scoped:
        return {}
    per_key = max(1, settings.CONSOLIDATION_MAX_CANDIDATES // 2)
    found: dict[int, list[Entity]] = {}
    # One GIN lookup per key, in a function whose plan cannot be anything else (migration
    # knowledge/0020: a young workspace's stale statistics led the planner to test every
    # active name instead), planned at every call, over an index without a pending list
    # (knowledge/0021: a plan cached from a crawl's first windows, and the unmerged entries
    # every lookup scanned, made it 200-480 ms a window).
    for entity in Entity.objects.raw(
        "SELECT * FROM knowledge_blocking_candidates("
        "%s::bigint, %s::integer[], %s::bigint[], %s::text[], %s::bigint, %s::integer, "
        "%s::integer)",
        [workspace.pk, positions, type_ids, scoped, exclude or 0, per_key,
         settings.CONSOLIDATION_MAX_CANDIDATES],
    ):  # fmt: skip
        found.setdefault(entity.position, []).append(entity)  # type: ignore[attr-defined]
    return found


def kept_apart(workspace: Workspace, one: Entity, other: Entity) -> bool:
    """Two entities no name match joins: a person said they are not the same, or their code
    paths tell them apart (`code_paths_differ`)."""
    return (
        not_same(workspace, one.pk, other.pk) or code_paths_differ(one.name, other.name) is not None
    )


def with_evidence_in_source(workspace: Workspace, entity_ids: set[int], source_id: int) -> set[int]:
    """The entities of `entity_ids` that a mention in a document of the source names."""
    if not entity_ids:
        return set()
    return set(
        Mention.objects.for_workspace(workspace)
        .filter(entity_id__in=entity_ids, chunk__document__source_id=source_id)
        .values_list("entity_id", flat=True)
        .distinct()
    )


# The rule of an automatic merge logged before merges recorded theirs.
UNRECORDED_RULE = "unrecorded"


@dataclass(frozen=True, slots=True)
class MergeStep:
    """One merge on the way from an entity to the one it lives in now: the event that made
    it (None if the history has none), the rule that decided it (`decide.Rule`; `manual` for
    a person's) and the reasons logged with it."""

    merged_id: int
    survivor_id: int
    event_id: int | None
    rule: str
    reasons: tuple[str, ...]


def why_merged(workspace: Workspace, merged_id: int, survivor_id: int) -> list[MergeStep]:
    """Why the entity `merged_id` now lives in `survivor_id`: each merge from it to the
    survivor, read from the curation history (one step, or more when its survivor was
    merged in turn). Empty when it does not live there (never merged into it, or the merge
    was undone)."""
    path = _merge_path(workspace, merged_id, survivor_id)
    return [_merge_step(workspace, one, into) for one, into in pairwise(path)]


def _merge_path(workspace: Workspace, merged_id: int, survivor_id: int) -> list[int]:
    """The ids from `merged_id` along `merged_into` to `survivor_id`, or [] when the chain
    of merges does not lead there."""
    path = [merged_id]
    while path[-1] != survivor_id:
        row = (
            Entity.objects.for_workspace(workspace)
            .filter(pk=path[-1], state=EntityState.MERGED)
            .values_list("merged_into_id", flat=True)
            .first()
        )
        if row is None or row in path:
            return []
        path.append(row)
    return path if len(path) > 1 else []


def _merge_step(workspace: Workspace, merged_id: int, survivor_id: int) -> MergeStep:
    event = (
        CurationEvent.objects.for_workspace(workspace)
        .filter(
            action__in=[CurationAction.MERGE, CurationAction.AUTO_MERGE],
            entity_id=survivor_id,
            undone_by__isnull=True,
            payload__merged__contains=[{"id": merged_id}],
        )
        .order_by("-created_at", "-id")
        .first()
    )
    if event is None:
        return MergeStep(merged_id, survivor_id, None, UNRECORDED_RULE, ())
    manual = event.action == CurationAction.MERGE
    rule = event.payload.get("rule") or (decide.Rule.MANUAL if manual else UNRECORDED_RULE)
    reasons = tuple(event.payload.get("reasons") or ())
    return MergeStep(merged_id, survivor_id, event.pk, str(rule), reasons)


def not_same(workspace: Workspace, a: int, b: int) -> bool:
    low, high = sorted((a, b))
    return (
        CurationRule.objects.for_workspace(workspace)
        .filter(kind=RuleKind.NOT_SAME, active=True, entity_id=low, other_id=high)
        .exists()
    )


@dataclass(slots=True)
class KnownEntities:
    """What the workspace already says about a batch of (canonical key, type) names."""

    blocked: set[Key]
    found: dict[Key, Entity]
    missing: list[Key]
    by_id: dict[int, Entity]  # every entity read (pinned, aliased, same key)
    exact: dict[Key, Entity]  # active entities with exactly the key and type


def known_entities(
    workspace: Workspace, names: Mapping[Key, tuple[str, EntityType]]
) -> KnownEntities:
    """Resolve names by what curation and the graph already say, cheapest and most
    authoritative first: blocked names, pins, the alias table, the same canonical key and
    type, then a type the name's evidence voted for, then an entity of another type that
    one of the two sides has the fallback type for (`untyped_twin`)."""
    keys = list(names)
    canon = {text for text, _ in keys}
    rules = list(
        CurationRule.objects.for_workspace(workspace).filter(
            active=True, kind__in=[RuleKind.BLOCKED, RuleKind.ALIAS_PIN], canonical__in=canon
        )
    )
    blocked = {
        key
        for key in keys
        for rule in rules
        if rule.kind == RuleKind.BLOCKED
        and rule.canonical == key[0]
        and rule.entity_type_id in (None, key[1])
    }
    pins = _pins(rules, keys)
    aliases = {
        (alias.canonical, alias.entity.type_id): alias.entity_id
        for alias in Alias.objects.for_workspace(workspace)
        .filter(canonical__in=canon, entity__state=EntityState.ACTIVE)
        .select_related("entity")
    }
    candidates = set(pins.values()) | set(aliases.values())
    by_id = {
        e.pk: e
        for e in Entity.objects.for_workspace(workspace)
        .filter(Q(pk__in=candidates) | Q(state=EntityState.ACTIVE, canonical_name__in=canon))
        .select_related("type")
    }
    exact = {
        (e.canonical_name, e.type_id): e for e in by_id.values() if e.state == EntityState.ACTIVE
    }
    known = KnownEntities(blocked=blocked, found={}, missing=[], by_id=by_id, exact=exact)
    for key in keys:
        if key in blocked:
            continue
        entity = follow_pin(pins[key], by_id) if key in pins else None
        if entity is None and key in aliases:
            entity = by_id.get(aliases[key])
        if entity is None:
            entity = (
                exact.get(key)
                or voted_entity(key, names[key][1], by_id)
                or _untyped_twin(key, names[key], by_id)
            )
        if entity is not None:
            known.found[key] = entity
        else:
            known.missing.append(key)
    return known


def _untyped_twin(
    key: Key, wanted: tuple[str, EntityType], by_id: dict[int, Entity]
) -> Entity | None:
    others = [
        e
        for e in by_id.values()
        if e.state == EntityState.ACTIVE and e.canonical_name == key[0] and e.type_id != key[1]
    ]
    return untyped_twin(wanted[0], wanted[1].name, others, fallback=FALLBACK_TYPE)


def _pins(rules: list[CurationRule], keys: list[Key]) -> dict[Key, int]:
    """Key -> the entity a curation pin sends it to; a pin for exactly this type wins over
    an every-type pin."""
    pins: dict[Key, int] = {}
    for rule in rules:
        if rule.kind != RuleKind.ALIAS_PIN or rule.entity_id is None:
            continue
        for key in keys:
            applies = rule.canonical == key[0] and rule.entity_type_id in (None, key[1])
            if applies and (key not in pins or rule.entity_type_id is not None):
                pins[key] = rule.entity_id
    return pins


def names_a_known_entity(workspace_id: int, text: str) -> bool:
    """Whether the text writes the name or an alias of an active entity of the workspace
    (any of its n-grams has that canonical key: knowledge/consolidation/text_names.py). A
    known-only source's windows that name none are not extracted at all: what an
    extractor found in them would name no known entity, and known-only extraction adds
    evidence for known ones only."""
    keys = sorted(name_keys(text))
    if not keys:
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT EXISTS (
                SELECT 1 FROM knowledge_entity
                WHERE workspace_id = %s AND canonical_name = ANY(%s) AND state = 'active'
            ) OR EXISTS (
                SELECT 1 FROM knowledge_alias a JOIN knowledge_entity e ON e.id = a.entity_id
                WHERE a.workspace_id = %s AND a.canonical = ANY(%s) AND e.state = 'active'
            )
            """,
            [workspace_id, keys, workspace_id, keys],
        )
        return bool(cursor.fetchone()[0])
