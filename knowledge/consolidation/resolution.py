"""Which entity an extracted name is: curation rules first, then the cheap tiers.

Order (cheapest and most authoritative first), for each (name, type):

1. a blocked name (in that type, or in every type) is never an entity again;
2. a name pinned by curation (a merge, a rename, an alias added by a person) goes to the
   entity it is pinned to, whatever became of it since (followed through later merges);
3. the alias table;
4. an active entity with the same canonical key and type (knowledge/consolidation/names.py:
   Unicode, case, punctuation, articles, simple plurals, corporate suffixes);
5. acronym / expansion and character similarity against at most
   CONSOLIDATION_MAX_CANDIDATES candidates of the type that share a blocking key (a capped
   GIN lookup per key, never all pairs): at or above the type's auto-merge threshold the new
   name becomes a new entity merged at once into the match — an automatic merge, logged
   and undone like a manual one; in the review band a `MergeSuggestion` (unless the pair
   was rejected before); below, a new entity;
6. otherwise a new entity (unless the source is known-only).

Entities of different types stay apart; only a person (or the LLM reviewer) merges them: a
new entity whose canonical name an entity of another type has is queued for review with it
("same name, different types"). An entity's type follows the majority of the types the
extractor gave its mentions (`Entity.type_votes`, kept by `do_refresh_derived`) unless a
person set it; a name whose evidence already voted for a type on an entity of another type
goes to that entity (the pin of a retype applies in every type). The whole batch is
resolved with a fixed number of queries.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Q
from rapidfuzz import fuzz, process

from knowledge.consolidation import names
from knowledge.consolidation.keys import entity_blocking_keys, entity_key, suffixes, thresholds
from knowledge.models import (
    Alias,
    CurationRule,
    Entity,
    EntityState,
    EntityType,
    MergeSuggestion,
    RuleKind,
)
from workspaces.models import Workspace

Key = tuple[str, int]  # (canonical key, entity type id)


def lock_names(workspace: Workspace, keys: Iterable[Key]) -> None:
    """Transaction-scoped advisory locks on (workspace, type, key), taken in one sorted
    order: two workers resolving the same name take turns, and the second finds the first's
    entity instead of creating a twin."""
    names_ = sorted({f"entity:{workspace.pk}:{type_id}:{text}" for text, type_id in keys})
    if not names_:
        return
    with connection.cursor() as cursor:
        # One round trip; ORDER BY fixes the order the locks are taken in.
        cursor.execute(
            "SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0))) "
            "FROM (SELECT unnest(%s::text[]) AS k ORDER BY 1) AS ordered",
            [names_],
        )


def _follow(entity_id: int, entities: dict[int, Entity]) -> Entity | None:
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


def resolve_entities(
    workspace: Workspace,
    wanted: Iterable[tuple[str, EntityType]],
    *,
    create: bool,
    counts: dict[str, int] | None = None,
) -> dict[Key, Entity]:
    """Entities for (name, type) pairs, keyed by (name_key(name), type id). Names that are
    blocked — and, without `create` (known-only), names matching nothing — are absent."""
    counts = counts if counts is not None else {}
    keys: dict[Key, tuple[str, EntityType]] = {}
    for name, entity_type in wanted:
        text = entity_key(name, entity_type.name)
        if text:
            keys.setdefault((text, entity_type.pk), (name.strip()[:300], entity_type))
    if not keys:
        return {}
    if create:
        lock_names(workspace, keys)
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
    if blocked:
        counts["entities_blocked"] = counts.get("entities_blocked", 0) + len(blocked)
    pins: dict[Key, int] = {}
    for rule in rules:
        if rule.kind != RuleKind.ALIAS_PIN or rule.entity_id is None:
            continue
        for key in keys:
            applies = rule.canonical == key[0] and rule.entity_type_id in (None, key[1])
            # A pin for exactly this type wins over an every-type pin.
            if applies and (key not in pins or rule.entity_type_id is not None):
                pins[key] = rule.entity_id
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
    found: dict[Key, Entity] = {}
    missing: list[Key] = []
    for key in keys:
        if key in blocked:
            continue
        entity = None
        if key in pins:
            entity = _follow(pins[key], by_id)
        if entity is None and key in aliases:
            entity = by_id.get(aliases[key])
        if entity is None:
            entity = exact.get(key) or _voted(key, keys[key][1], by_id)
        if entity is not None:
            found[key] = entity
        else:
            missing.append(key)
    if missing and create:
        matches: dict[Key, Match | None] = {
            key: best_match(workspace, *keys[key]) for key in missing
        }
        vectors = _name_vectors([keys[key][0] for key in missing])
        for key in missing:
            found_match = matches[key]
            limits = thresholds(keys[key][1].name)
            if (
                (found_match is None or found_match[1].score < limits.review)
                and vectors
                and not _vetoed(found_match)
            ):
                neighbour = nearest_by_embedding(
                    workspace, keys[key][1], vectors[keys[key][0]], model=vectors["model"]
                )
                if neighbour is not None:
                    matches[key] = neighbour
        # Sorted, so two workers inserting overlapping sets lock index entries in one order;
        # ON CONFLICT DO NOTHING, so they create one entity between them.
        Entity.objects.bulk_create(
            [
                Entity(
                    workspace=workspace,
                    name=keys[key][0],
                    canonical_name=key[0],
                    type=keys[key][1],
                    blocking_keys=entity_blocking_keys(keys[key][0], keys[key][1].name),
                    **_embedding_fields(vectors, keys[key][0]),
                )
                for key in sorted(missing)
            ],
            ignore_conflicts=True,
        )
        created: dict[Key, Entity] = {}
        for entity in (
            Entity.objects.for_workspace(workspace)
            .filter(state=EntityState.ACTIVE, canonical_name__in={text for text, _ in missing})
            .select_related("type")
        ):
            made = (entity.canonical_name, entity.type_id)
            if made in keys and made not in found:
                created[made] = entity
        known = {e.pk: e for e in [*by_id.values(), *created.values()]}
        for key, entity in created.items():
            found[key] = _apply_match(workspace, entity, matches.get(key), counts)
            if found[key] is entity:
                suggest_other_types(workspace, entity, known.values(), counts)
            else:
                known.pop(entity.pk)  # merged away just now
    elif missing:
        # Known-only: a name may still match an existing entity of another type when that
        # is the only entity of the name.
        by_name: dict[str, list[Entity]] = {}
        for entity in exact.values():
            by_name.setdefault(entity.canonical_name, []).append(entity)
        for key in missing:
            if len(by_name.get(key[0], [])) == 1:
                found[key] = by_name[key[0]][0]
    return found


def _voted(key: Key, entity_type: EntityType, by_id: dict[int, Entity]) -> Entity | None:
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


TYPES_REASON = "same name, different types"


def suggest_other_types(
    workspace: Workspace, entity: Entity, known: Iterable[Entity], counts: dict[str, int]
) -> int:
    """A new entity whose name an entity of another type already has: a homonym (Paris the
    city, Paris the person) or the extractor typing one thing two ways. Only a person (or the
    LLM reviewer) tells which, so the pair is queued for review, never merged here."""
    made_count = 0
    for other in known:
        if (
            other.state != EntityState.ACTIVE
            or other.canonical_name != entity.canonical_name
            or other.type_id == entity.type_id
            or not_same(workspace, entity.pk, other.pk)
        ):
            continue
        low, high = sorted((entity.pk, other.pk))
        kinds = " / ".join(sorted({entity.type.name, other.type.name}))
        _, made = MergeSuggestion.objects.get_or_create(
            workspace=workspace,
            entity_a_id=low,
            entity_b_id=high,
            defaults={"score": 1.0, "reasons": [f"{TYPES_REASON}: {kinds}"]},
        )
        if made:
            counts["type_suggestions"] = counts.get("type_suggestions", 0) + 1
            made_count += 1
    return made_count


# Candidates scored in full after the quick pre-ranking (rapidfuzz, in C).
FULL_SCORING = 6


EMBEDDING_REASON = "embedding"


Match = tuple[Entity, names.Similarity]


# Reasons with which the spelling tier says "different" on purpose ("iPhone 14" / "iPhone
# 15", "Java" / "JavaScript", "Jr."): a close embedding does not overrule them.
VETOES = ("number differs", "number in one name only", "substring only", "qualifier in")


def _vetoed(match: Match | None) -> bool:
    return match is not None and any(r.startswith(VETOES) for r in match[1].reasons)


def _name_vectors(name_list: list[str]) -> dict[str, Any]:
    """Embeddings of new names, keyed by name (plus "model" and "dim"); empty when the
    embedding model is unavailable (the tier is then skipped, as search degrades)."""
    from ingest.embeddings import EmbeddingUnavailable, get_embedder

    try:
        embedder = get_embedder()
    except EmbeddingUnavailable:
        return {}
    unique = sorted(set(name_list))
    vectors: dict[str, Any] = dict(zip(unique, embedder.encode(unique), strict=True))
    vectors["model"] = embedder.model_id
    vectors["dim"] = embedder.dimension
    return vectors


def _embedding_fields(vectors: dict[str, Any], name: str) -> dict[str, Any]:
    if name not in vectors:
        return {}
    return {
        "embedding": vectors[name],
        "embedding_model": vectors["model"],
        "embedding_dim": vectors["dim"],
    }


def nearest_by_embedding(
    workspace: Workspace, entity_type: EntityType, vector: list[float], *, model: str
) -> Match | None:
    """The active entity of the type whose name embedding is closest (HNSW, cosine), when
    at least CONSOLIDATION_EMBEDDING_REVIEW similar: a candidate for review only."""
    dim = len(vector)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT id, 1 - ((embedding::vector({dim})) <=> %s::vector({dim})) AS similarity
            FROM {Entity._meta.db_table}
            WHERE workspace_id = %s AND type_id = %s AND state = 'active'
              AND embedding_dim = %s AND embedding_model = %s
            ORDER BY (embedding::vector({dim})) <=> %s::vector({dim})
            LIMIT 1
            """,  # noqa: S608 (table name and dimension are ours; values are parameters)
            [str(vector), workspace.pk, entity_type.pk, dim, model, str(vector)],
        )
        row = cursor.fetchone()
    if row is None or row[1] < settings.CONSOLIDATION_EMBEDDING_REVIEW:
        return None
    entity = Entity.objects.filter(pk=row[0]).first()
    if entity is None:
        return None
    similarity = float(row[1])
    return entity, names.Similarity(
        score=round(similarity, 4), reasons=(f"{EMBEDDING_REASON} {similarity:.2f}",)
    )


def best_match(
    workspace: Workspace, name: str, entity_type: EntityType, *, exclude: int | None = None
) -> Match | None:
    """The most similar active entity of the type among those sharing a blocking key.

    Candidates come from `_candidates`; a quick token-set ratio on their canonical keys picks
    the few that get the full similarity (acronym candidates always do), so the cost per
    name stays small however many share a common word.
    """
    keys = entity_blocking_keys(name, entity_type.name)
    if not keys:
        return None
    candidates = _candidates(workspace, entity_type, keys, exclude=exclude)
    if not candidates:
        return None
    key = entity_key(name, entity_type.name)
    acronyms = {k for k in keys if k.startswith("a:")}
    ranked = process.extract(
        key,
        {i: c.canonical_name for i, c in enumerate(candidates)},
        scorer=fuzz.token_set_ratio,
        limit=FULL_SCORING,
    )
    chosen = {index for _, _, index in ranked} | {
        i for i, c in enumerate(candidates) if acronyms & set(c.blocking_keys)
    }
    best: tuple[Entity, names.Similarity] | None = None
    for index in sorted(chosen):
        candidate = candidates[index]
        score = names.name_similarity(name, candidate.name, suffixes=suffixes(entity_type.name))
        if best is None or score.score > best[1].score:
            best = (candidate, score)
    return best


def _candidates(
    workspace: Workspace, entity_type: EntityType, keys: list[str], *, exclude: int | None
) -> list[Entity]:
    """Active entities of the type sharing a blocking key: at most
    CONSOLIDATION_MAX_CANDIDATES in all and half of that per key, one GIN lookup per key in a
    single query. Capping each key, not the union, keeps the cost flat as the graph grows: a
    common word ("Smith", "Systems") is in thousands of names, and reading all of them to
    pick the best-known few was the one cost that grew with the graph. The rare keys (the
    full name, its rarer words and their ends) come back whole, and those are the ones a
    variant or a typo shares with its entity."""
    per_key = max(1, settings.CONSOLIDATION_MAX_CANDIDATES // 2)
    table = Entity._meta.db_table
    return list(
        Entity.objects.raw(
            f"""
            SELECT DISTINCT ON (e.id) e.id, e.name, e.canonical_name, e.type_id,
                   e.mention_count, e.blocking_keys
            FROM unnest(%s::text[]) WITH ORDINALITY AS k(key, position)
            CROSS JOIN LATERAL (
                SELECT id, name, canonical_name, type_id, mention_count, blocking_keys
                FROM {table}
                WHERE knowledge_scoped_keys(type_id, blocking_keys) @> ARRAY[%s || ':' || k.key]
                  AND state = 'active' AND id <> %s
                  -- Implied by the type (types are per workspace), and checked on the rows
                  -- found (+ 0): intersecting with the workspace's or type's whole b-tree
                  -- index cost ten times the lookup itself.
                  AND workspace_id + 0 = %s AND type_id + 0 = %s
                LIMIT %s
            ) AS e
            ORDER BY e.id
            LIMIT %s
            """,  # noqa: S608 (the table name is ours; every value is a parameter)
            [keys, str(entity_type.pk), exclude or 0, workspace.pk, entity_type.pk, per_key,
             settings.CONSOLIDATION_MAX_CANDIDATES],
        )
    )  # fmt: skip


def _apply_match(
    workspace: Workspace,
    entity: Entity,
    match: tuple[Entity, names.Similarity] | None,
    counts: dict[str, int],
) -> Entity:
    """A new entity joins its match (automatic merge), or is queued for review with it."""
    if match is None or match[0].pk == entity.pk:
        return entity
    other, similarity = match
    limits = thresholds(entity.type.name)
    by_embedding = similarity.reasons[:1] and similarity.reasons[0].startswith(EMBEDDING_REASON)
    if not by_embedding and similarity.score < limits.review:
        return entity
    if not_same(workspace, entity.pk, other.pk):
        return entity
    # A close embedding alone is a reason to ask, never to merge.
    if similarity.score >= limits.auto_merge and not by_embedding:
        from knowledge.actions.curation import do_merge_entities

        do_merge_entities(
            workspace=workspace,
            survivor_id=other.pk,
            merged_ids=[entity.pk],
            automatic=True,
            reasons=list(similarity.reasons),
        )
        counts["auto_merged"] = counts.get("auto_merged", 0) + 1
        return other
    low, high = sorted((entity.pk, other.pk))
    MergeSuggestion.objects.get_or_create(
        workspace=workspace,
        entity_a_id=low,
        entity_b_id=high,
        defaults={"score": round(similarity.score, 4), "reasons": list(similarity.reasons)},
    )
    counts["suggestions"] = counts.get("suggestions", 0) + 1
    return entity


def not_same(workspace: Workspace, a: int, b: int) -> bool:
    low, high = sorted((a, b))
    return (
        CurationRule.objects.for_workspace(workspace)
        .filter(kind=RuleKind.NOT_SAME, active=True, entity_id=low, other_id=high)
        .exists()
    )
