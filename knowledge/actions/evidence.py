"""The write funnel for evidence and what is derived from it.

Extraction, resolution and curation all change evidence (mentions, relation evidence) or
the entities it points at; they all end here: evidence removal, the derived fields
(mention counts, first/last seen, descriptions, keywords, relation weights, type votes)
recomputed for exactly what was touched, entities and relations left with no evidence
retired, and the graph projection's sync scheduled in the same transaction.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, F, Max, Min, Sum
from django.db.models import Window as SqlWindow
from django.db.models.functions import RowNumber

from ingest.models import Chunk
from knowledge.consolidation.keys import entity_blocking_keys, entity_key
from knowledge.graph.sync import schedule_graph_sync
from knowledge.models import (
    Entity,
    EntityState,
    EntityType,
    Mention,
    Relation,
    RelationEvidence,
    TypeStatus,
)
from system.bulk import update_rows

# The weight of a hand-made relation no extraction supports (weights are strength / 10).
MANUAL_RELATION_WEIGHT = 1.0


@dataclass(slots=True)
class Touched:
    entities: set[int] = field(default_factory=set)
    relations: set[int] = field(default_factory=set)


def delete_evidence(mentions: Any, evidence: Any, touched: Touched) -> None:
    touched.entities.update(mentions.values_list("entity_id", flat=True).distinct())
    touched.relations.update(evidence.values_list("relation_id", flat=True).distinct())
    mentions.delete()
    evidence.delete()


def _first_rows(
    queryset: Any,
    *,
    partition: str,
    fields: tuple[str, ...],
    limit: int,
    order: tuple[str, ...] = ("pk",),
) -> Any:
    """The first `limit` rows (by `order`, ids by default) of each `partition` value, in one
    query."""
    ordering = [F(f[1:]).desc() if f.startswith("-") else F(f).asc() for f in order]
    return (
        queryset.annotate(
            row=SqlWindow(RowNumber(), partition_by=[F(partition)], order_by=ordering)
        )
        .filter(row__lte=limit)
        .order_by(partition, *order)
        .values_list(partition, *fields)
    )


# The order an entity's description fragments are read in: its definitions (a glossary or
# API entry's, `Mention.defines`) before the statements that merely name it, then by id. On
# the Python manual `get_ready`'s definition ("Returns a tuple with all the nodes that are
# ready.") came fourth, after the overview's sentences and another method's definition.
FRAGMENT_ORDER = ("-defines", "pk")


def do_refresh_derived(
    *,
    workspace_id: int,
    entity_ids: Iterable[int],
    relation_ids: Iterable[int],
    prune: bool = True,
) -> None:
    """Recompute counts, first/last seen, descriptions and weights from evidence, in a
    fixed number of queries however many rows were touched; active entities and relations
    with no evidence left are deleted (they came from nothing else), unless a person
    curated the entity. Curation passes `prune=False`: it never deletes as a side effect.
    Every change to the graph passes through here, so here the projection is told."""
    entity_ids, relation_ids = set(entity_ids), set(relation_ids)
    if relation_ids:
        _refresh_relations(relation_ids, prune=prune)
    if entity_ids:
        _refresh_entities(entity_ids, prune=prune)
        _follow_type_votes(entity_ids)
    schedule_graph_sync(workspace_id=workspace_id, entity_ids=entity_ids, relation_ids=relation_ids)


def _refresh_relations(relation_ids: set[int], *, prune: bool) -> None:
    stats = {
        row["relation_id"]: row
        for row in RelationEvidence.objects.filter(relation_id__in=relation_ids)
        .values("relation_id")
        .annotate(n=Count("pk"), strength=Sum("strength"))
    }
    # Only live edges go; one folded into another by a merge waits for its unmerge, and one
    # a person changed or added (`curated`) stays without extracted evidence.
    if prune:
        Relation.objects.filter(
            pk__in=relation_ids - set(stats), state=EntityState.ACTIVE, curated=False
        ).delete()
    bare = Relation.objects.filter(pk__in=relation_ids - set(stats))
    bare.update(evidence_count=0, weight=0.0)
    # A relation a person added by hand (its note) weighs as one strong evidence row.
    bare.filter(notes__isnull=False).update(weight=MANUAL_RELATION_WEIGHT)
    fragments: dict[int, list[tuple[str, list[str]]]] = {}
    for relation_id, description, keywords in _first_rows(
        RelationEvidence.objects.filter(relation_id__in=set(stats)),
        partition="relation_id",
        fields=("description", "keywords"),
        limit=50,
    ):
        fragments.setdefault(relation_id, []).append((description, keywords or []))
    updates = []
    for relation in Relation.objects.filter(pk__in=set(stats)).only(
        "pk", "description", "description_curated"
    ):
        row, parts = stats[relation.pk], fragments.get(relation.pk, [])
        relation.evidence_count = row["n"]
        relation.weight = round(float(row["strength"] or 0) / 10, 3)
        if not relation.description_curated:  # a person's description stays
            relation.description = _top_fragments(d for d, _ in parts)
        relation.keywords = _keywords(k for _, ks in parts for k in ks)
        updates.append(relation)
    update_rows(updates, ["evidence_count", "weight", "description", "keywords"])


def _refresh_entities(entity_ids: set[int], *, prune: bool) -> None:
    entity_stats = {
        row["entity_id"]: row
        for row in Mention.objects.filter(entity_id__in=entity_ids)
        .values("entity_id")
        .annotate(n=Count("pk"), first=Min("created_at"), last=Max("created_at"))
    }
    # Entities a person curated stay without evidence; merged ones wait for an unmerge.
    if prune:
        Entity.objects.filter(
            pk__in=entity_ids - set(entity_stats), state=EntityState.ACTIVE, curated=False
        ).delete()
    Entity.objects.filter(pk__in=entity_ids - set(entity_stats)).update(
        mention_count=0, source_ids=[]
    )
    alive = Mention.objects.filter(entity_id__in=set(entity_stats))
    sources, descriptions, votes = (
        _mention_sources(alive),
        _mention_descriptions(alive),
        _votes(alive),
    )
    entity_updates: list[Entity] = []
    for entity in Entity.objects.filter(pk__in=set(entity_stats)).only(
        "pk", "summary", "summary_hash", "type_votes"
    ):
        seen = entity_stats[entity.pk]
        entity.type_votes = dict(sorted(votes.get(entity.pk, {}).items()))
        entity.mention_count = seen["n"]
        entity.source_ids = sources.get(entity.pk, [])
        entity.first_seen_at, entity.last_seen_at = seen["first"], seen["last"]
        own = descriptions.get(entity.pk, [])
        texts = [text for text, _ in own]
        if entity.summary and entity.summary_hash == fragments_hash(texts):
            entity.description = entity.summary
        else:
            # An entity a definition describes is described by its definitions alone.
            entity.description = _top_fragments([t for t, defines in own if defines] or texts)
        entity_updates.append(entity)
    update_rows(
        entity_updates,
        ["mention_count", "source_ids", "first_seen_at", "last_seen_at", "description",
         "type_votes"],
    )  # fmt: skip


def _mention_sources(mentions: Any) -> dict[int, list[int]]:
    """Entity id -> the ids of the sources its mentions are in, ascending."""
    sources: dict[int, list[int]] = {}
    for entity_id, source_id in (
        mentions.values_list("entity_id", "chunk__document__source_id")
        .distinct()
        .order_by("entity_id", "chunk__document__source_id")
    ):
        sources.setdefault(entity_id, []).append(source_id)
    return sources


def _mention_descriptions(mentions: Any) -> dict[int, list[tuple[str, bool]]]:
    """Entity id -> (description, whether it is a definition) of its first 50 described
    mentions in FRAGMENT_ORDER."""
    descriptions: dict[int, list[tuple[str, bool]]] = {}
    for entity_id, description, defines in _first_rows(
        mentions.exclude(description=""),
        partition="entity_id",
        fields=("description", "defines"),
        limit=50,
        order=FRAGMENT_ORDER,
    ):
        descriptions.setdefault(entity_id, []).append((description, defines))
    return descriptions


def _votes(mentions: Any) -> dict[int, dict[str, int]]:
    """Entity id -> {type the extractor gave a mention: how many mentions}."""
    votes: dict[int, dict[str, int]] = {}
    for entity_id, type_name, n in (
        mentions.exclude(extracted_type="")
        .values_list("entity_id", "extracted_type")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        votes.setdefault(entity_id, {})[type_name] = n
    return votes


def _follow_type_votes(entity_ids: set[int]) -> None:
    """Retype entities whose evidence mostly says another type (a strict majority over the
    current type's votes), unless a person set the type. The name's canonical key and
    blocking keys follow the type; an active entity already holding that (type, key) — a
    homonym kept apart — keeps the entity where it is."""
    for entity in Entity.objects.filter(
        pk__in=entity_ids, state=EntityState.ACTIVE, type_curated=False
    ).select_related("type"):
        votes = entity.type_votes or {}
        if not votes:
            continue
        winner = max(sorted(votes), key=lambda name: votes[name])
        if winner == entity.type.name or votes[winner] <= votes.get(entity.type.name, 0):
            continue
        new_type = EntityType.objects.filter(
            workspace_id=entity.workspace_id, name=winner, status=TypeStatus.ACTIVE
        ).first()
        if new_type is None:
            continue
        canonical = entity_key(entity.name, new_type.name) or entity.canonical_name
        taken = (
            Entity.objects.filter(
                workspace_id=entity.workspace_id,
                state=EntityState.ACTIVE,
                type=new_type,
                canonical_name=canonical,
            )
            .exclude(pk=entity.pk)
            .exists()
        )
        if taken:
            continue
        Entity.objects.filter(pk=entity.pk).update(
            type=new_type,
            canonical_name=canonical,
            blocking_keys=entity_blocking_keys(entity.name, new_type.name),
        )


def distinct_fragments(fragments: Iterable[str], *, limit: int = 50) -> list[str]:
    seen: dict[str, str] = {}
    for fragment in fragments:
        text = " ".join(fragment.split())
        if text:
            seen.setdefault(text.casefold(), text)
        if len(seen) >= limit:
            break
    return list(seen.values())


def fragments_hash(fragments: Iterable[str]) -> str:
    """What an LLM summary was made from: the distinct fragments, in order."""
    return hashlib.sha256("\0".join(distinct_fragments(fragments)).encode()).hexdigest()


def _top_fragments(fragments: Iterable[str], *, limit: int = 3) -> str:
    """The first few distinct fragments, statements before notes (see `NOTE_FRAGMENT`), without a
    fragment another one begins with: a statement cut short where a link ended ("… are
    passed to io.TextIOWrapper") beside the whole of it read twice."""
    distinct = distinct_fragments(fragments)
    folded = [text.casefold() for text in distinct]
    whole = [
        text
        for text, key in zip(distinct, folded, strict=True)
        if not any(other != key and other.startswith(key) for other in folded)
    ]
    ranked = sorted(whole, key=lambda text: NOTE_FRAGMENT.match(text) is not None)
    return " ".join(ranked[:limit])[:2000]


# Fragments that annotate a subject rather than say what it is: a manual's version and
# availability notes ("Changed in version 3.8: …", "Deprecated since version 3.12",
# "Availability: Unix."). On the Python manual 195 entities' descriptions began with one
# because their first mention sat in such a note. They still count, after the statements.
NOTE_FRAGMENT = re.compile(
    r"(?:(?:new|changed|added|deprecated|removed)\s+(?:in|since)\s+version\b"
    r"|availability\s*:|deprecated\b)",
    re.IGNORECASE,
)


def _keywords(keywords: Iterable[str], *, limit: int = 12) -> list[str]:
    return distinct_fragments((str(k) for k in keywords), limit=limit)


def do_forget_chunks(*, chunk_ids: list[int]) -> None:
    """Take back what chunks contributed before they are deleted (changed text, a gone
    page, a deleted source): their evidence goes and the entities and relations it touched
    are recomputed (deleted when nothing else supports them). Runs in the caller's
    transaction, so the graph and the chunks change together."""
    touched = Touched()
    delete_evidence(
        Mention.objects.filter(chunk_id__in=chunk_ids),
        RelationEvidence.objects.filter(chunk_id__in=chunk_ids),
        touched,
    )
    if not touched.entities and not touched.relations:
        return
    # The chunks of one call belong to one workspace (a document's, a source's).
    workspace_id = Chunk.objects.filter(pk__in=chunk_ids).values_list("workspace_id", flat=True)[0]
    do_refresh_derived(
        workspace_id=workspace_id, entity_ids=touched.entities, relation_ids=touched.relations
    )


def do_refresh_moved_chunks(*, chunk_ids: list[int]) -> None:
    """Chunks now belong to another document (a duplicate took over its original's, see
    ingest/actions/duplicates.py): their evidence stays, and what is derived from where it
    is (an entity's sources) is recomputed. Runs in the caller's transaction."""
    entity_ids = set(
        Mention.objects.filter(chunk_id__in=chunk_ids).values_list("entity_id", flat=True)
    )
    if not entity_ids:
        return
    workspace_id = Chunk.objects.filter(pk__in=chunk_ids).values_list("workspace_id", flat=True)[0]
    do_refresh_derived(workspace_id=workspace_id, entity_ids=entity_ids, relation_ids=())
