"""Which entity an extracted name is: curation rules first, then the cheap tiers.

Order (cheapest and most authoritative first), for each (name, type):

1. a blocked name (in that type, or in every type) is never an entity again;
2. a name pinned by curation (a merge, a rename, an alias added by a person) goes to the
   entity it is pinned to, whatever became of it since (followed through later merges);
3. the alias table;
4. an active entity with the same canonical key and type (consolidation/names/normalise.py:
   Unicode, case, punctuation, articles, simple plurals, corporate suffixes);
5. acronym / expansion and character similarity against at most
   CONSOLIDATION_MAX_CANDIDATES candidates of the type that share a blocking key (a capped
   GIN lookup per key, never all pairs): at or above the type's auto-merge threshold the new
   name becomes a new entity merged at once into the match — an automatic merge, logged
   and undone like a manual one; in the review band a `MergeSuggestion` (unless the pair
   was rejected before); below, a new entity;
6. otherwise a new entity (unless the source is known-only).

Within one document, a shorter name standing for a full name the document used before
("Kestrel" after "Kestrel Navigation System", "KNS" after "... System (KNS)", "Lindqvist"
after "Jonas Lindqvist"; knowledge/consolidation/short_forms.py) is resolved as that full
name: the materializer asks `short_form_plan` before resolving a document's names and
`record_short_forms` after, which makes the short name an alias of the full name's entity
(origin auto, with a curation event) — or, when another entity of the type already answers
to it, or the document names several full names it could stand for, queues the pairs for
review instead.

Entities of different types stay apart across sources; only a person (or the LLM
reviewer) merges them: a new entity whose canonical name an entity of another type has is
queued for review with it ("same name, different types"). Within one source a name spelled
like the one entity of another type the source already named is that entity (one sense per
source: `_one_sense_in_source`). The other exception is the fallback type ("concept"), which an
extractor gives when it cannot tell: a name of that type and an entity of another type
spelled alike, case included, are one entity (`untyped_twin`; "GET" and "get()" still go
to review). An entity's type follows the majority of the types the
extractor gave its mentions (`Entity.type_votes`, kept by `do_refresh_derived`) unless a
person set it; a name whose evidence already voted for a type on an entity of another type
goes to that entity (the pin of a retype applies in every type). The whole batch is
resolved with a fixed number of queries.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import connection

from ingest.models import Document
from knowledge.actions.curation.entities import sync_alias_list
from knowledge.actions.curation.events import record_event
from knowledge.actions.curation.merge import do_merge_entities
from knowledge.actions.embeddings import embedding_fields, name_vectors
from knowledge.consolidation import names
from knowledge.consolidation.decide import Outcome, Rule, outcome
from knowledge.consolidation.keys import entity_blocking_keys, entity_key, thresholds
from knowledge.consolidation.matching import TYPES_REASON, Key, Match, vetoed
from knowledge.consolidation.short_forms import DocName, ShortFormPlan, plan_short_forms
from knowledge.extraction.entity_types import FALLBACK_TYPE
from knowledge.models import (
    Alias,
    AliasOrigin,
    CurationAction,
    CurationRule,
    Entity,
    EntityState,
    EntityType,
    MergeSuggestion,
    RuleKind,
)
from knowledge.selectors.matching import (
    KnownEntities,
    best_matches,
    kept_apart,
    known_entities,
    nearest_by_embeddings,
    not_same,
    with_evidence_in_source,
)
from workspaces.models import Workspace


def lock_names(workspace: Workspace, keys: Iterable[Key]) -> None:
    """Transaction-scoped advisory locks on (workspace, key), whatever the type, taken in
    one sorted order: two workers resolving the same name take turns, and the second finds
    the first's entity instead of creating a twin (or, across types, an entity the name
    should join: `untyped_twin`)."""
    names_ = sorted({f"entity:{workspace.pk}:{text}" for text, _ in keys})
    if not names_:
        return
    with connection.cursor() as cursor:
        # One round trip; ORDER BY fixes the order the locks are taken in.
        cursor.execute(
            "SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0))) "
            "FROM (SELECT unnest(%s::text[]) AS k ORDER BY 1) AS ordered",
            [names_],
        )


def resolve_entities(
    workspace: Workspace,
    wanted: Iterable[tuple[str, EntityType]],
    *,
    create: bool,
    counts: dict[str, int] | None = None,
    source_id: int | None = None,
) -> dict[Key, Entity]:
    """Entities for (name, type) pairs, keyed by (name_key(name), type id). Names that are
    blocked — and, without `create` (known-only), names matching nothing — are absent.
    `source_id`: the source the names were read in (`one_sense_in_source`)."""
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
    known = known_entities(workspace, keys)
    if known.blocked:
        counts["entities_blocked"] = counts.get("entities_blocked", 0) + len(known.blocked)
    if known.missing and create and source_id is not None:
        _one_sense_in_source(workspace, keys, known, source_id, counts)
    if known.missing and create:
        _create_missing(workspace, keys, known, counts)
    elif known.missing:
        _match_other_types(known)
    return known.found


def _one_sense_in_source(
    workspace: Workspace,
    keys: dict[Key, tuple[str, EntityType]],
    known: KnownEntities,
    source_id: int,
    counts: dict[str, int],
) -> None:
    """One sense per source: a new name spelled like the one active entity of its canonical
    name, of another type, that the same source has already named, is that entity — its
    type then follows the majority of its mentions' types (`Entity.type_votes`).

    Within one manual, book or site a name almost always means one thing, and a second type
    is the extractor's guess from another sentence: on a book about Debian (the panel's
    handbook) "Linux" was a technology, a person, a product and a place, "GNOME" and "KDE"
    each a technology and an organisation. Across sources a name may well be two things
    (Paris the city in one, the person in another): there the pair still goes to review.
    Nor does a window that gives the name two types at once (the extractor saw two senses
    side by side), or a name two entities of other types hold already, join anything."""
    types_in_batch: dict[str, set[int]] = {}
    for text, type_id in keys:
        types_in_batch.setdefault(text, set()).add(type_id)
    candidates: dict[Key, Entity] = {}
    for key in known.missing:
        if len(types_in_batch[key[0]]) > 1:
            continue
        others = [e for text_type, e in known.exact.items() if text_type[0] == key[0]]
        if len(others) == 1 and names.same_spelling(others[0].name, keys[key][0]):
            candidates[key] = others[0]
    named = with_evidence_in_source(workspace, {e.pk for e in candidates.values()}, source_id)
    for key, entity in candidates.items():
        if entity.pk in named:
            known.found[key] = entity
            known.missing.remove(key)
            counts["one_sense_in_source"] = counts.get("one_sense_in_source", 0) + 1


def _create_missing(
    workspace: Workspace,
    keys: dict[Key, tuple[str, EntityType]],
    known: KnownEntities,
    counts: dict[str, int],
) -> None:
    """New entities for the names nothing knew, each then merged into its match or queued
    for review with it (the spelling tier, else the name embedding)."""
    joins = _untyped_in_batch(keys, known.missing)
    missing = [key for key in known.missing if key not in joins]
    matches: dict[Key, Match | None] = dict(
        zip(missing, best_matches(workspace, [keys[key] for key in missing]), strict=True)
    )
    vectors = name_vectors([keys[key][0] for key in missing])
    unmatched = [key for key in missing if vectors and _unsure(matches[key], keys[key][1])]
    if unmatched:
        neighbours = nearest_by_embeddings(
            workspace,
            [(keys[key][1], vectors[keys[key][0]]) for key in unmatched],
            model=vectors["model"],
        )
        for key, neighbour in zip(unmatched, neighbours, strict=True):
            if neighbour is not None:
                matches[key] = neighbour
    created = _insert_entities(workspace, keys, missing, vectors, known.found)
    others = {e.pk: e for e in [*known.by_id.values(), *created.values()]}
    for key, entity in created.items():
        known.found[key] = _apply_match(workspace, entity, matches.get(key), counts)
        if known.found[key] is entity:
            suggest_other_types(workspace, entity, others.values(), counts)
        else:
            others.pop(entity.pk)  # merged away just now
    for untyped, typed in joins.items():
        if typed in known.found:
            known.found[untyped] = known.found[typed]


def _untyped_in_batch(
    keys: dict[Key, tuple[str, EntityType]], missing: list[Key]
) -> dict[Key, Key]:
    """New names of the fallback type that a new typed name of the same batch is spelled
    like (`untyped_twin`, within one batch): only the typed one is created, and the
    untyped one joins it."""
    typed: dict[str, list[Key]] = {}
    for key in sorted(missing):
        if keys[key][1].name != FALLBACK_TYPE:
            typed.setdefault(key[0], []).append(key)
    joins: dict[Key, Key] = {}
    for key in missing:
        name, entity_type = keys[key]
        if entity_type.name != FALLBACK_TYPE:
            continue
        alike = [
            other for other in typed.get(key[0], []) if names.same_spelling(keys[other][0], name)
        ]
        if alike:
            joins[key] = alike[0]
    return joins


def _unsure(match: Match | None, entity_type: EntityType) -> bool:
    """Whether a new name's spelling match leaves room for its name embedding's: none, or
    one below the type's review threshold that no rule vetoed."""
    return (match is None or match[1].score < thresholds(entity_type.name).review) and not vetoed(
        match
    )


def _insert_entities(
    workspace: Workspace,
    keys: dict[Key, tuple[str, EntityType]],
    missing: list[Key],
    vectors: dict[str, Any],
    found: dict[Key, Entity],
) -> dict[Key, Entity]:
    """Insert the missing entities; the ones this call made, by key."""
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
                **embedding_fields(vectors, keys[key][0]),
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
    return created


def _match_other_types(known: KnownEntities) -> None:
    """Known-only: a name may still match an existing entity of another type when that is
    the only entity of the name."""
    by_name: dict[str, list[Entity]] = {}
    for entity in known.exact.values():
        by_name.setdefault(entity.canonical_name, []).append(entity)
    for key in known.missing:
        if len(by_name.get(key[0], [])) == 1:
            known.found[key] = by_name[key[0]][0]


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


def _apply_match(
    workspace: Workspace,
    entity: Entity,
    match: Match | None,
    counts: dict[str, int],
) -> Entity:
    """A new entity joins its match (automatic merge), or is queued for review with it, as
    the match's `outcome` under the type's thresholds says."""
    if match is None or match.target.pk == entity.pk:
        return entity
    other, similarity, rule = match
    verdict = outcome(match, thresholds(entity.type.name))
    if verdict is Outcome.NONE:
        return entity
    if kept_apart(workspace, entity, other):
        return entity
    if verdict is Outcome.MERGE:
        do_merge_entities(
            workspace=workspace,
            survivor_id=other.pk,
            merged_ids=[entity.pk],
            automatic=True,
            reasons=list(similarity.reasons),
            rule=rule,
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


# --- Short forms within a document --------------------------------------------------------

# The score a short form's review pair is queued with (the review band of most types).
SHORT_FORM_SCORE = 0.75


def short_form_plan(
    workspace: Workspace, doc_names: list[DocName], text: str, types: dict[int, EntityType]
) -> ShortFormPlan:
    """Which of one document's names stand for which of its full names
    (`plan_short_forms`), less what curation decided: a short name blocked or pinned to an
    entity keeps its rule, and a pair a person called "not the same" stays apart."""
    plan = plan_short_forms(doc_names, text)
    if not plan.resolved:
        return plan
    shorts = set(plan.resolved)
    rules = CurationRule.objects.for_workspace(workspace).filter(
        active=True,
        kind__in=[RuleKind.BLOCKED, RuleKind.ALIAS_PIN],
        canonical__in={key[0] for key in shorts},
    )
    for rule in rules:
        for key in list(plan.resolved):
            if key[0] == rule.canonical and rule.entity_type_id in (None, key[1]):
                del plan.resolved[key]
    wanted: dict[Key, tuple[str, EntityType]] = {}
    for short, full in plan.resolved.items():
        for name in (short, full.key):
            wanted[name] = (name[0], types[name[1]])
    if wanted:
        known = known_entities(workspace, wanted).found
        for short, full in list(plan.resolved.items()):
            one, other = known.get(short), known.get(full.key)
            if one and other and one.pk != other.pk and not_same(workspace, one.pk, other.pk):
                del plan.resolved[short]
    return plan


def record_short_forms(
    workspace: Workspace,
    *,
    document: Document,
    plan: ShortFormPlan,
    used: dict[Key, Entity],
    entities: dict[Key, Entity],
    names_by_key: dict[Key, str],
    counts: dict[str, int],
) -> None:
    """After a document's names are resolved: each short name that went to its full name's
    entity (`used`) becomes an alias of it — unless another active entity of the type
    answers to the name already, in which case that pair is queued for review; an
    ambiguous short name's entity is queued for review with each full name's."""
    where = document.title or document.path
    for key, entity in used.items():
        name, reason = names_by_key[key], f"{plan.reasons[key]} in {where!r}"
        other = _answering_to(workspace, key, exclude=entity.pk)
        if other is not None:
            if _suggest(workspace, other, entity, reason):
                counts["short_form_suggestions"] = counts.get("short_form_suggestions", 0) + 1
            continue
        if (
            entity.canonical_name == key[0]
            or Alias.objects.filter(entity=entity, canonical=key[0]).exists()
        ):
            continue
        alias = Alias.objects.create(
            workspace=workspace, entity=entity, name=name, canonical=key[0],
            origin=AliasOrigin.AUTO,
        )  # fmt: skip
        event = record_event(
            workspace=workspace, action=CurationAction.ALIAS_ADD, actor=None, entity=entity,
            payload={"alias": alias.pk, "canonical": key[0], "automatic": True,
                     "document": document.pk, "reasons": [reason], "rule": Rule.SHORT_FORM.value},
            summary=f"Added alias {name!r} to {entity.name!r}: {reason}"[:500],
        )  # fmt: skip
        Alias.objects.filter(pk=alias.pk).update(event=event)
        sync_alias_list([entity.pk])
        counts["short_forms"] = counts.get("short_forms", 0) + 1
    for key, fulls in plan.ambiguous.items():
        short_entity = entities.get(key)
        targets = [entities.get(full.key) for full in fulls]
        found = {e.pk: e for e in targets if e is not None}
        if short_entity is None or short_entity.pk in found:
            continue
        reason = f"{plan.reasons[key]} in {where!r}"
        for target in found.values():
            if _suggest(workspace, short_entity, target, reason):
                counts["short_form_suggestions"] = counts.get("short_form_suggestions", 0) + 1


def _answering_to(workspace: Workspace, key: Key, *, exclude: int) -> Entity | None:
    """Another active entity of the type whose name or alias is `key`."""
    text, type_id = key
    same_name = (
        Entity.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE, type_id=type_id, canonical_name=text)
        .exclude(pk=exclude)
        .first()
    )
    if same_name is not None:
        return same_name
    alias = (
        Alias.objects.for_workspace(workspace)
        .filter(canonical=text, entity__type_id=type_id, entity__state=EntityState.ACTIVE)
        .exclude(entity_id=exclude)
        .select_related("entity")
        .first()
    )
    return alias.entity if alias is not None else None


def _suggest(workspace: Workspace, one: Entity, other: Entity, reason: str) -> bool:
    """Queue the pair for review (once, never against a "not the same"); whether it was new."""
    if one.pk == other.pk or not_same(workspace, one.pk, other.pk):
        return False
    low, high = sorted((one.pk, other.pk))
    _, made = MergeSuggestion.objects.get_or_create(
        workspace=workspace,
        entity_a_id=low,
        entity_b_id=high,
        defaults={"score": SHORT_FORM_SCORE, "reasons": [reason]},
    )
    return made
