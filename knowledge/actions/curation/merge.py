"""Merging entities, and the exact undo of a merge.

A merge moves the merged entities' mentions, aliases and relations onto the survivor
(self-loops folded away, duplicate edges folded into the survivor's edge with their
evidence) and leaves the merged rows in state `merged`, so `do_unmerge` can put every row
back as it was — also after later ingestion, whose mentions of a merged name go back with
it. The merged names are pinned to the survivor; an unmerged pair is "not the same"
(rules.py). Consolidation's automatic merges are this same action (`automatic=True`),
logged and undone like a person's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from knowledge.actions.curation.entities import locked_entities, names_of, sync_alias_list
from knowledge.actions.curation.events import (
    ENTITY_FIELDS,
    Expected,
    Undoing,
    lock_event,
    mark_undone,
    record_event,
    register_inverse,
    restore,
    snapshot,
)
from knowledge.actions.curation.rules import remember_not_same
from knowledge.actions.evidence import do_refresh_derived
from knowledge.consolidation.keys import entity_key
from knowledge.models import (
    Alias,
    AliasOrigin,
    CurationAction,
    CurationEvent,
    CurationRule,
    Entity,
    EntityState,
    Mention,
    MergeSuggestion,
    Relation,
    RelationEvidence,
    RuleKind,
    SuggestionStatus,
)
from workspaces.errors import Conflict, InvalidInput
from workspaces.models import Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User

MERGE_ACTIONS = frozenset({CurationAction.MERGE, CurationAction.AUTO_MERGE})
# The merge events `do_unmerge` takes, and the words of its refusals.
MERGES = Expected(MERGE_ACTIONS, kind="merge", noun="Merge")
# The fields of an edge a merge re-points or folds, which the unmerge puts back.
FOLDED_RELATION_FIELDS = ("source_id", "target_id", "type_id", "state", "merged_into_id")


def default_survivor(entities: Iterable[Entity]) -> Entity:
    """The entity a merge keeps when nobody says: the most mentioned, then the oldest."""
    return min(entities, key=lambda e: (-e.mention_count, e.pk))


def do_merge_entities(
    *,
    workspace: Workspace,
    merged_ids: Iterable[int],
    survivor_id: int | None = None,
    actor: User | None = None,
    automatic: bool = False,
    reasons: list[str] | None = None,
    rule: str | None = None,
) -> CurationEvent:
    """Merge `merged_ids` into `survivor_id`; returns the event `do_unmerge` takes. Without a
    survivor, the default one of all the entities named survives (`default_survivor`).
    `automatic` marks consolidation's own merges (with its `reasons`, and the `rule` that
    decided them: knowledge/consolidation/decide.py's `Rule`)."""
    named = set(merged_ids) | ({survivor_id} if survivor_id is not None else set())
    if len(named) < 2:
        raise InvalidInput("Merging needs at least two different entities.")
    with transaction.atomic():
        entities = locked_entities(workspace, named)
        if survivor_id is None:
            survivor_id = default_survivor(entities.values()).pk
        merged_ids = sorted(named - {survivor_id})
        survivor = entities[survivor_id]
        merged = [entities[pk] for pk in merged_ids]
        for entity in entities.values():
            if entity.state != EntityState.ACTIVE:
                raise Conflict(f"{entity.name!r} is {entity.state}; only active entities merge.")
        payload: dict[str, Any] = {
            "survivor": {"id": survivor.pk, **snapshot(survivor, ENTITY_FIELDS)},
            "merged": [{"id": e.pk, **snapshot(e, ENTITY_FIELDS)} for e in merged],
            "mentions": {},
            "relations": [],
            "evidence": [],
            "aliases_moved": [],
            "aliases_created": [],
            "rules_moved": [],
            "suggestions": [],
            "reasons": reasons or [],
        }
        if rule is not None:
            payload["rule"] = str(rule)
        names = _move_mentions(survivor, merged, payload)

        touched_relations = _fold_relations(workspace, survivor, merged_ids, payload)

        _move_aliases(workspace, survivor, merged, payload, automatic=automatic)
        _move_rules_and_suggestions(workspace, survivor, merged_ids, payload)

        for entity in merged:
            entity.state = EntityState.MERGED
            entity.merged_into = survivor
            entity.save(update_fields=["state", "merged_into", "updated_at"])
        if not automatic:
            survivor.curated = True
            survivor.save(update_fields=["curated", "updated_at"])
        event = record_event(
            workspace,
            CurationAction.AUTO_MERGE if automatic else CurationAction.MERGE,
            actor=actor,
            entity=survivor,
            payload=payload,
            summary=f"Merged {', '.join(repr(e.name) for e in merged)} into {survivor.name!r}",
        )
        Alias.objects.filter(pk__in=payload["aliases_created"]).update(event=event)
        _pin_merged_names(workspace, survivor, merged, names, event)
        sync_alias_list([survivor.pk, *merged_ids])
        do_refresh_derived(
            workspace_id=workspace.pk,
            entity_ids=[survivor.pk, *merged_ids],
            relation_ids=touched_relations,
            prune=False,
        )
    return event


def _move_mentions(
    survivor: Entity, merged: list[Entity], payload: dict[str, Any]
) -> dict[int, list[str]]:
    """The merged entities' mentions go to the survivor (their ids kept for the undo);
    returns each merged entity's names, to pin them to the survivor.

    A mention at a place where the survivor has one already (the same run, chunk and
    start: "Tuple" found inside "Tuples", or two names the extractor could not locate in
    one chunk) stays with the merged entity: the survivor's evidence holds that place, a
    mention is unique per place, and the undo finds everything where it was."""
    names = {}
    for entity in merged:
        names[entity.pk] = sorted(names_of(entity))
        mention_ids = _movable_mentions(entity.pk, survivor.pk)
        payload["mentions"][str(entity.pk)] = mention_ids
        Mention.objects.filter(pk__in=mention_ids).update(entity=survivor)
    payload["names"] = {str(pk): value for pk, value in names.items()}
    return names


def _movable_mentions(entity_id: int, survivor_id: int) -> list[int]:
    """The entity's mentions at places the survivor has no mention of (`_move_mentions`)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT m.id FROM knowledge_mention m
            WHERE m.entity_id = %s AND NOT EXISTS (
                SELECT 1 FROM knowledge_mention s
                WHERE s.entity_id = %s AND s.run_id = m.run_id AND s.chunk_id = m.chunk_id
                  AND s.char_start IS NOT DISTINCT FROM m.char_start)
            ORDER BY m.id
            """,
            [entity_id, survivor_id],
        )
        return [row[0] for row in cursor.fetchall()]


def _move_aliases(
    workspace: Workspace,
    survivor: Entity,
    merged: list[Entity],
    payload: dict[str, Any],
    *,
    automatic: bool,
) -> None:
    """The merged entities' aliases, and their own names, become the survivor's."""
    merged_ids = [entity.pk for entity in merged]
    moved = list(Alias.objects.filter(entity_id__in=merged_ids).values_list("pk", "entity_id"))
    payload["aliases_moved"] = moved
    for alias_id, _ in moved:
        alias = Alias.objects.get(pk=alias_id)
        if Alias.objects.filter(entity=survivor, canonical=alias.canonical).exists():
            # The survivor already answers to it; remember the row to recreate it.
            payload.setdefault("aliases_deleted", []).append(
                {"entity_id": alias.entity_id, "name": alias.name,
                 "canonical": alias.canonical, "origin": alias.origin}
            )  # fmt: skip
            alias.delete()
        else:
            Alias.objects.filter(pk=alias_id).update(entity=survivor)
    for entity in merged:
        if (
            entity.canonical_name != survivor.canonical_name
            and not Alias.objects.filter(entity=survivor, canonical=entity.canonical_name).exists()
        ):
            alias = Alias.objects.create(
                workspace=workspace,
                entity=survivor,
                name=entity.name,
                canonical=entity.canonical_name,
                origin=AliasOrigin.MERGE if not automatic else AliasOrigin.AUTO,
            )
            payload["aliases_created"].append(alias.pk)


def _move_rules_and_suggestions(
    workspace: Workspace, survivor: Entity, merged_ids: list[int], payload: dict[str, Any]
) -> None:
    """Pins to a merged entity now pin to the survivor; open suggestions among the merged
    entities and the survivor are settled (accepted) by the merge."""
    rules = CurationRule.objects.for_workspace(workspace).filter(
        active=True, kind=RuleKind.ALIAS_PIN, entity_id__in=merged_ids
    )
    payload["rules_moved"] = list(rules.values_list("pk", "entity_id"))
    rules.update(entity=survivor)
    suggestions = (
        MergeSuggestion.objects.for_workspace(workspace)
        .filter(status=SuggestionStatus.OPEN)
        .filter(
            Q(entity_a_id__in=merged_ids, entity_b=survivor)
            | Q(entity_a=survivor, entity_b_id__in=merged_ids)
            | Q(entity_a_id__in=merged_ids, entity_b_id__in=merged_ids)
        )
    )
    payload["suggestions"] = list(suggestions.values_list("pk", flat=True))
    suggestions.update(status=SuggestionStatus.ACCEPTED, decided_at=timezone.now())


def _pin_merged_names(
    workspace: Workspace,
    survivor: Entity,
    merged: list[Entity],
    names: dict[int, list[str]],
    event: CurationEvent,
) -> None:
    """Later extraction sends the merged names to the survivor (rules the undo retires)."""
    for entity in merged:
        for canonical in names[entity.pk]:
            CurationRule.objects.create(
                workspace=workspace,
                kind=RuleKind.ALIAS_PIN,
                canonical=canonical,
                entity_type_id=entity.type_id,
                entity=survivor,
                event=event,
            )


def _fold_relations(
    workspace: Workspace, survivor: Entity, merged_ids: list[int], payload: dict[str, Any]
) -> set[int]:
    """Re-point the merged entities' edges at the survivor: self-loops are folded away,
    an edge the survivor already has takes the duplicate's evidence."""
    gone = set(merged_ids)
    touched: set[int] = set()
    relations = list(
        Relation.objects.for_workspace(workspace)
        .select_for_update()
        .filter(state=EntityState.ACTIVE)
        .filter(Q(source_id__in=gone) | Q(target_id__in=gone))
        .order_by("pk")
    )
    for relation in relations:
        payload["relations"].append(
            {"id": relation.pk, **snapshot(relation, FOLDED_RELATION_FIELDS)}
        )
        touched.add(relation.pk)
        source = survivor.pk if relation.source_id in gone else relation.source_id
        target = survivor.pk if relation.target_id in gone else relation.target_id
        if source == target:
            relation.state = EntityState.MERGED
            relation.save(update_fields=["state", "updated_at"])
            continue
        existing = (
            Relation.objects.for_workspace(workspace)
            .filter(
                state=EntityState.ACTIVE, source_id=source, target_id=target,
                type_id=relation.type_id,
            )
            .exclude(pk=relation.pk)
            .first()
        )  # fmt: skip
        if existing is not None:
            evidence = list(
                RelationEvidence.objects.filter(relation=relation).values_list("pk", flat=True)
            )
            payload["evidence"].append({"ids": evidence, "from": relation.pk})
            # One run's evidence for both edges would collide on the unique place; keep one.
            clashing = set(
                RelationEvidence.objects.filter(relation=existing).values_list(
                    "run_id", "chunk_id", "char_start"
                )
            )
            movable = [
                pk
                for pk, *place in RelationEvidence.objects.filter(pk__in=evidence).values_list(
                    "pk", "run_id", "chunk_id", "char_start"
                )
                if tuple(place) not in clashing
            ]
            RelationEvidence.objects.filter(pk__in=movable).update(relation=existing)
            relation.state = EntityState.MERGED
            relation.merged_into = existing
            relation.save(update_fields=["state", "merged_into", "updated_at"])
            touched.add(existing.pk)
        else:
            relation.source_id, relation.target_id = source, target
            relation.save(update_fields=["source", "target", "updated_at"])
    return touched


def do_unmerge(*, workspace: Workspace, event_id: int, actor: User | None = None) -> CurationEvent:
    """Undo a merge exactly: entities, aliases, mentions, relations and (through evidence)
    weights as they were before it. Mentions added since by ingestion under a merged
    entity's names go back to it; the pair is remembered as "not the same"."""
    with transaction.atomic():
        event = lock_event(workspace, event_id, MERGES)
        payload = event.payload
        survivor_id = payload["survivor"]["id"]
        merged_ids = [m["id"] for m in payload["merged"]]
        entities = locked_entities(workspace, [survivor_id, *merged_ids])
        survivor = entities[survivor_id]
        if survivor.state != EntityState.ACTIVE:
            raise Conflict(
                f"{survivor.name!r} is {survivor.state} now; undo what happened to it first."
            )
        # The survivor first: a majority vote may have given it a merged entity's type and
        # name key, which that entity takes back.
        restore(survivor, {k: v for k, v in payload["survivor"].items() if k != "id"})
        survivor.save()
        for saved in payload["merged"]:
            entity = entities[saved["id"]]
            restore(entity, {k: v for k, v in saved.items() if k != "id"})
            entity.save()
        _return_mentions(survivor, event)

        touched = _restore_relations(payload)

        _restore_aliases_and_rules(workspace, event, actor)
        undo = record_event(
            workspace,
            CurationAction.UNMERGE,
            actor=actor,
            entity=survivor,
            payload={"merge_event": event.pk},
            summary=f"Undid merge {event.pk} into {survivor.name!r}",
        )
        for merged_id in merged_ids:
            remember_not_same(workspace, survivor_id, merged_id, undo)
        mark_undone(event, by=undo)
        sync_alias_list([survivor_id, *merged_ids])
        do_refresh_derived(
            workspace_id=workspace.pk,
            entity_ids=[survivor_id, *merged_ids],
            relation_ids=touched,
            prune=False,
        )
    return undo


def _return_mentions(survivor: Entity, event: CurationEvent) -> None:
    """The merged entities take back their mentions, and those ingestion sent to the
    survivor under their names since the merge."""
    payload = event.payload
    for entity_id, mention_ids in payload["mentions"].items():
        Mention.objects.filter(pk__in=mention_ids, entity=survivor).update(entity_id=int(entity_id))
    # Later ingestion sent the merged names to the survivor; they go back with them.
    survivor_names = {survivor.canonical_name} | {
        c
        for c in Alias.objects.filter(entity=survivor).values_list("canonical", flat=True)
        if not any(c in names for names in payload.get("names", {}).values())
    }
    later = Mention.objects.filter(entity=survivor, created_at__gt=event.created_at)
    for entity_id, names in payload.get("names", {}).items():
        own = set(names) - survivor_names
        ids = [
            m.pk for m in later.only("pk", "surface_form")
            if entity_key(m.surface_form, survivor.type.name) in own
        ]  # fmt: skip
        Mention.objects.filter(pk__in=ids).update(entity_id=int(entity_id))


def _restore_relations(payload: dict[str, Any]) -> set[int]:
    """Edges and moved evidence as they were; returns the relations touched."""
    touched: set[int] = set()
    for move in payload["evidence"]:
        RelationEvidence.objects.filter(pk__in=move["ids"]).update(relation_id=move["from"])
    for saved in payload["relations"]:
        relation = Relation.objects.select_for_update().filter(pk=saved["id"]).first()
        if relation is None:
            continue
        if relation.merged_into_id:
            touched.add(relation.merged_into_id)
        restore(relation, {k: v for k, v in saved.items() if k != "id"})
        relation.save()
        touched.add(relation.pk)

    return touched


def _restore_aliases_and_rules(
    workspace: Workspace, event: CurationEvent, actor: User | None
) -> None:
    """Aliases, pins and the suggestions the merge settled, as before it (the suggestions
    rejected: a person undid the merge)."""
    payload = event.payload
    Alias.objects.filter(pk__in=payload["aliases_created"]).delete()
    for alias_id, entity_id in payload["aliases_moved"]:
        Alias.objects.filter(pk=alias_id).update(entity_id=entity_id)
    for row in payload.get("aliases_deleted", []):
        Alias.objects.get_or_create(
            workspace=workspace,
            entity_id=row["entity_id"],
            canonical=row["canonical"],
            defaults={"name": row["name"], "origin": row["origin"]},
        )
    CurationRule.objects.filter(event=event).update(active=False)
    for rule_id, entity_id in payload["rules_moved"]:
        CurationRule.objects.filter(pk=rule_id).update(entity_id=entity_id)
    MergeSuggestion.objects.filter(pk__in=payload["suggestions"]).update(
        status=SuggestionStatus.REJECTED, decided_by=actor, decided_at=timezone.now()
    )


@register_inverse(CurationAction.MERGE, CurationAction.AUTO_MERGE)
def _undo_merge(undoing: Undoing) -> CurationEvent:
    return do_unmerge(workspace=undoing.workspace, event_id=undoing.event.pk, actor=undoing.actor)
