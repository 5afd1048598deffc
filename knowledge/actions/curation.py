"""Curation: the changes people make to the graph, each one transaction and one
`CurationEvent` carrying what is needed to undo it exactly.

A merge moves the merged entities' mentions, aliases and relations onto the survivor
(self-loops folded away, duplicate edges folded into the survivor's edge with their
evidence) and leaves the merged rows in state `merged`, so `do_unmerge` can put every row
back as it was — also after later ingestion, whose mentions of a merged name go back with
it. Every decision also leaves a rule (`CurationRule`) that consolidation consults before
anything automatic: a merged name is pinned to the survivor, a deleted entity's name is
blocked, an unmerged pair is "not the same".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from knowledge.actions.embeddings import VECTOR_FIELDS, vector_fields_for
from knowledge.actions.evidence import do_refresh_derived
from knowledge.consolidation.keys import entity_blocking_keys, entity_key
from knowledge.graph.sync import schedule_graph_sync
from knowledge.models import (
    Alias,
    AliasOrigin,
    CurationAction,
    CurationEvent,
    CurationRule,
    Entity,
    EntityState,
    EntityType,
    Mention,
    MergeSuggestion,
    Relation,
    RelationEvidence,
    RuleKind,
    SuggestionStatus,
    TypeStatus,
)
from workspaces.errors import Conflict, InvalidInput, NotFound
from workspaces.models import Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User

ENTITY_FIELDS = ("name", "canonical_name", "type_id", "description", "state", "merged_into_id",
                 "curated", "type_curated", "aliases", "blocking_keys")  # fmt: skip
RELATION_FIELDS = ("source_id", "target_id", "type_id", "state", "merged_into_id")


def _snapshot(row: Any, fields: Iterable[str]) -> dict[str, Any]:
    return {field: getattr(row, field) for field in fields}


def _restore(row: Any, snapshot: dict[str, Any]) -> None:
    for field, value in snapshot.items():
        setattr(row, field, value)


def _locked_entities(workspace: Workspace, ids: Iterable[int]) -> dict[int, Entity]:
    """The entities, row-locked in id order (so two curators never deadlock)."""
    wanted = sorted(set(ids))
    found = {
        e.pk: e
        for e in Entity.objects.for_workspace(workspace)
        .select_for_update()
        .filter(pk__in=wanted)
        .order_by("pk")
    }
    missing = [pk for pk in wanted if pk not in found]
    if missing:
        raise NotFound(f"No entity {missing[0]} in this workspace.")
    return found


def _event(
    workspace: Workspace,
    action: str,
    *,
    actor: User | None,
    entity: Entity | None,
    payload: dict[str, Any],
    summary: str,
) -> CurationEvent:
    return CurationEvent.objects.create(
        workspace=workspace,
        action=action,
        actor=actor,
        entity=entity,
        payload=payload,
        summary=summary[:500],
    )


def _sync_alias_list(entity_ids: Iterable[int]) -> None:
    """Entity.aliases is the display copy of the alias table."""
    for entity in Entity.objects.filter(pk__in=set(entity_ids)):
        names = sorted(
            set(Alias.objects.filter(entity=entity).values_list("name", flat=True)) - {entity.name}
        )
        if names != entity.aliases:
            Entity.objects.filter(pk=entity.pk).update(aliases=names)


def _names_of(entity: Entity) -> set[str]:
    """The canonical names an entity answers to: its own and its aliases."""
    return {entity.canonical_name} | set(
        Alias.objects.filter(entity=entity).values_list("canonical", flat=True)
    )


# --- Merge and unmerge -----------------------------------------------------------------


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
        entities = _locked_entities(workspace, named)
        if survivor_id is None:
            survivor_id = default_survivor(entities.values()).pk
        merged_ids = sorted(named - {survivor_id})
        survivor = entities[survivor_id]
        merged = [entities[pk] for pk in merged_ids]
        for entity in entities.values():
            if entity.state != EntityState.ACTIVE:
                raise Conflict(f"{entity.name!r} is {entity.state}; only active entities merge.")
        payload: dict[str, Any] = {
            "survivor": {"id": survivor.pk, **_snapshot(survivor, ENTITY_FIELDS)},
            "merged": [{"id": e.pk, **_snapshot(e, ENTITY_FIELDS)} for e in merged],
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
        event = _event(
            workspace,
            CurationAction.AUTO_MERGE if automatic else CurationAction.MERGE,
            actor=actor,
            entity=survivor,
            payload=payload,
            summary=f"Merged {', '.join(repr(e.name) for e in merged)} into {survivor.name!r}",
        )
        Alias.objects.filter(pk__in=payload["aliases_created"]).update(event=event)
        _pin_merged_names(workspace, survivor, merged, names, event)
        _sync_alias_list([survivor.pk, *merged_ids])
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
        names[entity.pk] = sorted(_names_of(entity))
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
        payload["relations"].append({"id": relation.pk, **_snapshot(relation, RELATION_FIELDS)})
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
        event = _locked_merge_event(workspace, event_id)
        payload = event.payload
        survivor_id = payload["survivor"]["id"]
        merged_ids = [m["id"] for m in payload["merged"]]
        entities = _locked_entities(workspace, [survivor_id, *merged_ids])
        survivor = entities[survivor_id]
        if survivor.state != EntityState.ACTIVE:
            raise Conflict(
                f"{survivor.name!r} is {survivor.state} now; undo what happened to it first."
            )
        # The survivor first: a majority vote may have given it a merged entity's type and
        # name key, which that entity takes back.
        _restore(survivor, {k: v for k, v in payload["survivor"].items() if k != "id"})
        survivor.save()
        for snapshot in payload["merged"]:
            entity = entities[snapshot["id"]]
            _restore(entity, {k: v for k, v in snapshot.items() if k != "id"})
            entity.save()
        _return_mentions(survivor, event)

        touched = _restore_relations(payload)

        _restore_aliases_and_rules(workspace, event, actor)
        undo = _event(
            workspace,
            CurationAction.UNMERGE,
            actor=actor,
            entity=survivor,
            payload={"merge_event": event.pk},
            summary=f"Undid merge {event.pk} into {survivor.name!r}",
        )
        for merged_id in merged_ids:
            _not_same(workspace, survivor_id, merged_id, undo)
        event.undone_by = undo
        event.save(update_fields=["undone_by"])
        _sync_alias_list([survivor_id, *merged_ids])
        do_refresh_derived(
            workspace_id=workspace.pk,
            entity_ids=[survivor_id, *merged_ids],
            relation_ids=touched,
            prune=False,
        )
    return undo


def _locked_merge_event(workspace: Workspace, event_id: int) -> CurationEvent:
    """The merge event to undo, locked; a missing, other or undone event is refused."""
    event = (
        CurationEvent.objects.for_workspace(workspace)
        .select_for_update()
        .filter(pk=event_id)
        .first()
    )
    if event is None:
        raise NotFound(f"No curation event {event_id} in this workspace.")
    if event.action not in {CurationAction.MERGE, CurationAction.AUTO_MERGE}:
        raise Conflict(f"Event {event_id} is a {event.action}, not a merge.")
    if event.undone_by_id:
        raise Conflict(f"Merge {event_id} was undone already (event {event.undone_by_id}).")
    return event


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
    for snapshot in payload["relations"]:
        relation = Relation.objects.select_for_update().filter(pk=snapshot["id"]).first()
        if relation is None:
            continue
        if relation.merged_into_id:
            touched.add(relation.merged_into_id)
        _restore(relation, {k: v for k, v in snapshot.items() if k != "id"})
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


def _not_same(workspace: Workspace, a: int, b: int, event: CurationEvent) -> list[int]:
    """Remember the pair as different; returns the open suggestions of the pair it rejected."""
    low, high = sorted((a, b))
    CurationRule.objects.get_or_create(
        workspace=workspace,
        kind=RuleKind.NOT_SAME,
        entity_id=low,
        other_id=high,
        active=True,
        defaults={"event": event},
    )
    suggestions = MergeSuggestion.objects.for_workspace(workspace).filter(
        entity_a_id=low, entity_b_id=high, status=SuggestionStatus.OPEN
    )
    rejected = list(suggestions.values_list("pk", flat=True))
    suggestions.update(status=SuggestionStatus.REJECTED, decided_at=timezone.now())
    return rejected


# --- Single-entity changes -------------------------------------------------------------


def _one(workspace: Workspace, entity_id: int) -> Entity:
    return _locked_entities(workspace, [entity_id])[entity_id]


def do_rename_entity(
    *, workspace: Workspace, entity_id: int, name: str, actor: User | None = None
) -> CurationEvent:
    """A new display name; the old one stays an alias pinned to the entity, so extraction
    keeps finding it, and the new name holds after re-extraction."""
    clean = " ".join(name.split())[:300]
    if not clean:
        raise InvalidInput("An entity needs a name.")
    # The new name's vector, or none for the backfill to fill in (never the old name's);
    # before the row lock, since the model's first load takes seconds.
    vector = vector_fields_for(clean)
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        before = _snapshot(entity, ENTITY_FIELDS)
        canonical = entity_key(clean, entity.type.name)
        clash = (
            Entity.objects.for_workspace(workspace)
            .filter(state=EntityState.ACTIVE, type_id=entity.type_id, canonical_name=canonical)
            .exclude(pk=entity.pk)
            .first()
        )
        if clash is not None:
            raise Conflict(f"{clash.name!r} ({clash.pk}) has that name already: merge them.")
        old = entity.name
        alias_created = None
        if old != clean and entity.canonical_name != canonical:
            alias, created = Alias.objects.get_or_create(
                workspace=workspace,
                entity=entity,
                canonical=entity.canonical_name,
                defaults={"name": old, "origin": AliasOrigin.MANUAL},
            )
            alias_created = alias.pk if created else None
        entity.name, entity.canonical_name, entity.curated = clean, canonical, True
        entity.blocking_keys = entity_blocking_keys(clean, entity.type.name)
        for field, value in vector.items():
            setattr(entity, field, value)
        entity.save(
            update_fields=["name", "canonical_name", "blocking_keys", "curated", "updated_at",
                           *VECTOR_FIELDS]
        )  # fmt: skip
        event = _event(
            workspace, CurationAction.RENAME, actor=actor, entity=entity,
            payload={"before": before, "alias_created": alias_created},
            summary=f"Renamed {old!r} to {clean!r}",
        )  # fmt: skip
        lifted = [
            pk for key in sorted({before["canonical_name"], canonical})
            for pk in _pin(workspace, key, entity, event)
        ]  # fmt: skip
        event.payload["pins_lifted"] = lifted
        event.save(update_fields=["payload"])
        _sync_alias_list([entity.pk])
        schedule_graph_sync(workspace_id=workspace.pk, entity_ids=[entity.pk], relation_ids=[])
    return event


def _pin(workspace: Workspace, canonical: str, entity: Entity, event: CurationEvent) -> list[int]:
    """Pin the name to the entity; returns the ids of the pins to other entities it lifted
    (the event's undo brings them back)."""
    others = (
        CurationRule.objects.for_workspace(workspace)
        .filter(
            kind=RuleKind.ALIAS_PIN, canonical=canonical, entity_type_id=entity.type_id, active=True
        )
        .exclude(entity=entity)
    )
    lifted = list(others.values_list("pk", flat=True))
    others.update(active=False)
    CurationRule.objects.get_or_create(
        workspace=workspace,
        kind=RuleKind.ALIAS_PIN,
        canonical=canonical,
        entity_type_id=entity.type_id,
        entity=entity,
        active=True,
        defaults={"event": event},
    )
    return lifted


def do_retype_entity(
    *, workspace: Workspace, entity_id: int, type_name: str, actor: User | None = None
) -> CurationEvent:
    """A new type; the entity's names are pinned to it, so extraction that calls it
    something else still lands here."""
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        new_type = EntityType.objects.for_workspace(workspace).filter(name=type_name).first()
        if new_type is None or new_type.status == TypeStatus.RETIRED:
            raise InvalidInput(f"No usable entity type {type_name!r} in this workspace.")
        canonical = entity_key(entity.name, new_type.name)
        clash = (
            Entity.objects.for_workspace(workspace)
            .filter(state=EntityState.ACTIVE, type=new_type, canonical_name=canonical)
            .exclude(pk=entity.pk)
            .first()
        )
        if clash is not None:
            raise Conflict(f"{clash.name!r} ({clash.pk}) is that type already: merge them.")
        before = _snapshot(entity, ENTITY_FIELDS)
        old_type = entity.type.name
        entity.type, entity.curated, entity.canonical_name = new_type, True, canonical
        # A person's type outvotes the extractor's from now on.
        entity.type_curated = True
        entity.blocking_keys = entity_blocking_keys(entity.name, new_type.name)
        entity.save(
            update_fields=["type", "curated", "type_curated", "canonical_name", "blocking_keys",
                           "updated_at"]
        )  # fmt: skip
        event = _event(
            workspace, CurationAction.RETYPE, actor=actor, entity=entity,
            payload={"before": before},
            summary=f"Retyped {entity.name!r} from {old_type} to {new_type.name}",
        )  # fmt: skip
        # Pinned in every type: whatever type extraction says, the name comes here.
        for canonical in _names_of(entity):
            CurationRule.objects.create(
                workspace=workspace, kind=RuleKind.ALIAS_PIN, canonical=canonical,
                entity_type=None, entity=entity, event=event,
            )  # fmt: skip
        schedule_graph_sync(workspace_id=workspace.pk, entity_ids=[entity.pk], relation_ids=[])
    return event


def do_delete_entity(
    *, workspace: Workspace, entity_id: int, actor: User | None = None
) -> CurationEvent:
    """Hide an entity and its edges, and block its names so extraction does not bring it
    back; `do_restore_entity` undoes both."""
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        if entity.state != EntityState.ACTIVE:
            raise Conflict(f"{entity.name!r} is {entity.state}.")
        relations = Relation.objects.for_workspace(workspace).filter(
            Q(source=entity) | Q(target=entity), state=EntityState.ACTIVE
        )
        relation_ids = list(relations.values_list("pk", flat=True))
        relations.update(state=EntityState.DELETED)
        curated = entity.curated
        entity.state, entity.curated = EntityState.DELETED, True
        entity.save(update_fields=["state", "curated", "updated_at"])
        event = _event(
            workspace, CurationAction.DELETE, actor=actor, entity=entity,
            payload={"relations": relation_ids, "curated": curated},
            summary=f"Deleted {entity.name!r}",
        )  # fmt: skip
        for canonical in _names_of(entity):
            CurationRule.objects.create(
                workspace=workspace, kind=RuleKind.BLOCKED, canonical=canonical,
                entity_type_id=entity.type_id, entity=entity, event=event,
            )  # fmt: skip
        schedule_graph_sync(
            workspace_id=workspace.pk, entity_ids=[entity.pk], relation_ids=relation_ids
        )
    return event


def do_restore_entity(
    *, workspace: Workspace, entity_id: int, actor: User | None = None
) -> CurationEvent:
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        if entity.state != EntityState.DELETED:
            raise Conflict(f"{entity.name!r} is not deleted.")
        clash = (
            Entity.objects.for_workspace(workspace)
            .filter(state=EntityState.ACTIVE, type_id=entity.type_id,
                    canonical_name=entity.canonical_name)
            .first()
        )  # fmt: skip
        if clash is not None:
            raise Conflict(f"{clash.name!r} ({clash.pk}) took its place: merge them instead.")
        deleted = (
            CurationEvent.objects.for_workspace(workspace)
            .filter(entity=entity, action=CurationAction.DELETE, undone_by__isnull=True)
            .order_by("-created_at")
            .first()
        )
        entity.state = EntityState.ACTIVE
        entity.save(update_fields=["state", "updated_at"])
        event = _event(
            workspace, CurationAction.RESTORE, actor=actor, entity=entity,
            payload={"delete_event": deleted.pk if deleted else None},
            summary=f"Restored {entity.name!r}",
        )  # fmt: skip
        if deleted is not None:
            Relation.objects.filter(
                pk__in=deleted.payload.get("relations", []), state=EntityState.DELETED
            ).update(state=EntityState.ACTIVE)
            CurationRule.objects.filter(event=deleted).update(active=False)
            deleted.undone_by = event
            deleted.save(update_fields=["undone_by"])
        schedule_graph_sync(
            workspace_id=workspace.pk,
            entity_ids=[entity.pk],
            relation_ids=deleted.payload.get("relations", []) if deleted else [],
        )
    return event


def do_add_alias(
    *, workspace: Workspace, entity_id: int, name: str, actor: User | None = None
) -> CurationEvent:
    clean = " ".join(name.split())[:300]
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        canonical = entity_key(clean, entity.type.name)
        if not canonical:
            raise InvalidInput("An alias needs a name.")
        taken = (
            Alias.objects.for_workspace(workspace)
            .filter(canonical=canonical, entity__type_id=entity.type_id,
                    entity__state=EntityState.ACTIVE)
            .exclude(entity=entity)
            .select_related("entity")
            .first()
        )  # fmt: skip
        if taken is not None:
            raise Conflict(f"{clean!r} is an alias of {taken.entity.name!r} already.")
        alias, created = Alias.objects.get_or_create(
            workspace=workspace, entity=entity, canonical=canonical,
            defaults={"name": clean, "origin": AliasOrigin.MANUAL},
        )  # fmt: skip
        event = _event(
            workspace, CurationAction.ALIAS_ADD, actor=actor, entity=entity,
            payload={"alias": alias.pk, "canonical": canonical, "alias_created": created},
            summary=f"Added alias {clean!r} to {entity.name!r}",
        )  # fmt: skip
        event.payload["pins_lifted"] = _pin(workspace, canonical, entity, event)
        event.save(update_fields=["payload"])
        _sync_alias_list([entity.pk])
    return event


def do_remove_alias(
    *, workspace: Workspace, entity_id: int, name: str, actor: User | None = None
) -> CurationEvent:
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        canonical = entity_key(name, entity.type.name)
        rows = list(Alias.objects.filter(entity=entity, canonical=canonical).values())
        if not rows:
            raise NotFound(f"{entity.name!r} has no alias {name!r}.")
        Alias.objects.filter(pk=rows[0]["id"]).delete()
        pins = CurationRule.objects.filter(
            kind=RuleKind.ALIAS_PIN, canonical=canonical, entity=entity, active=True
        )
        lifted = list(pins.values_list("pk", flat=True))
        pins.update(active=False)
        row = {**rows[0], "created_at": rows[0]["created_at"].isoformat()}
        event = _event(
            workspace, CurationAction.ALIAS_REMOVE, actor=actor, entity=entity,
            payload={"canonical": canonical, "alias_row": row, "pins_lifted": lifted},
            summary=f"Removed alias {name!r} of {entity.name!r}",
        )  # fmt: skip
        _sync_alias_list([entity.pk])
    return event


def do_block_name(
    *,
    workspace: Workspace,
    name: str,
    type_name: str | None = None,
    actor: User | None = None,
) -> CurationEvent:
    """Extraction never creates (or attaches evidence to) an entity of this name again."""
    entity_type = None
    if type_name:
        entity_type = EntityType.objects.for_workspace(workspace).filter(name=type_name).first()
        if entity_type is None:
            raise InvalidInput(f"No entity type {type_name!r} in this workspace.")
    # Keys differ by type only in corporate suffixes: block each form the name can take.
    keys = sorted(
        {entity_key(name, type_name)}
        if type_name
        else {entity_key(name, "organization"), entity_key(name, "")}
    )
    if not any(keys):
        raise InvalidInput("Say which name to block.")
    with transaction.atomic():
        event = _event(
            workspace, CurationAction.BLOCK, actor=actor, entity=None,
            payload={"canonical": keys, "type": type_name},
            summary=f"Blocked the name {name!r}" + (f" as {type_name}" if type_name else ""),
        )  # fmt: skip
        for canonical in keys:
            CurationRule.objects.create(
                workspace=workspace, kind=RuleKind.BLOCKED, canonical=canonical,
                entity_type=entity_type, event=event,
            )  # fmt: skip
    return event


def do_mark_not_same(
    *, workspace: Workspace, entity_id: int, other_id: int, actor: User | None = None
) -> CurationEvent:
    """These two are different: never merged automatically, never suggested again."""
    if entity_id == other_id:
        raise InvalidInput("An entity is always the same as itself.")
    with transaction.atomic():
        entities = _locked_entities(workspace, [entity_id, other_id])
        event = _event(
            workspace, CurationAction.NOT_SAME, actor=actor, entity=entities[entity_id],
            payload={"pair": sorted([entity_id, other_id])},
            summary=f"{entities[entity_id].name!r} is not {entities[other_id].name!r}",
        )  # fmt: skip
        event.payload["suggestions_rejected"] = _not_same(workspace, entity_id, other_id, event)
        event.save(update_fields=["payload"])
    return event


def do_split_entity(
    *,
    workspace: Workspace,
    entity_id: int,
    mention_ids: Iterable[int],
    name: str,
    type_name: str | None = None,
    actor: User | None = None,
) -> CurationEvent:
    """Move chosen mentions to a new entity (and pin its name to it, and mark the two as
    not the same, so re-extraction keeps them apart)."""
    clean = " ".join(name.split())[:300]
    if not clean:
        raise InvalidInput("The new entity needs a name.")
    vector = vector_fields_for(clean)
    ids = sorted(set(mention_ids))
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        mentions = Mention.objects.filter(entity=entity, pk__in=ids)
        if mentions.count() != len(ids) or not ids:
            raise InvalidInput("Choose one or more mentions of this entity to split off.")
        entity_type = entity.type
        if type_name:
            found = EntityType.objects.for_workspace(workspace).filter(name=type_name).first()
            if found is None:
                raise InvalidInput(f"No entity type {type_name!r} in this workspace.")
            entity_type = found
        canonical = entity_key(clean, entity_type.name)
        if (
            Entity.objects.for_workspace(workspace)
            .filter(state=EntityState.ACTIVE, type=entity_type, canonical_name=canonical)
            .exists()
        ):
            raise Conflict(f"An entity named {clean!r} of that type exists: merge into it.")
        new = Entity.objects.create(
            workspace=workspace, name=clean, canonical_name=canonical, type=entity_type,
            curated=True, type_curated=True,
            blocking_keys=entity_blocking_keys(clean, entity_type.name), **vector,
        )  # fmt: skip
        mentions.update(entity=new)
        event = _event(
            workspace, CurationAction.SPLIT, actor=actor, entity=entity,
            payload={"new_entity": new.pk, "mentions": ids},
            summary=f"Split {len(ids)} mention(s) of {entity.name!r} into {clean!r}",
        )  # fmt: skip
        event.payload["pins_lifted"] = _pin(workspace, canonical, new, event)
        _not_same(workspace, entity.pk, new.pk, event)
        event.save(update_fields=["payload"])
        do_refresh_derived(
            workspace_id=workspace.pk, entity_ids=[entity.pk, new.pk], relation_ids=[], prune=False
        )
    return event


# --- The review queue ------------------------------------------------------------------


def _open_suggestion(workspace: Workspace, suggestion_id: int) -> MergeSuggestion:
    suggestion = (
        MergeSuggestion.objects.for_workspace(workspace)
        .select_for_update()
        .filter(pk=suggestion_id)
        .first()
    )
    if suggestion is None:
        raise NotFound(f"No merge suggestion {suggestion_id} in this workspace.")
    if suggestion.status != SuggestionStatus.OPEN:
        raise Conflict(f"Suggestion {suggestion_id} was {suggestion.status} already.")
    return suggestion


def do_accept_suggestion(
    *,
    workspace: Workspace,
    suggestion_id: int,
    into: int | None = None,
    actor: User | None = None,
) -> CurationEvent:
    """Merge the pair (into the entity with more mentions unless `into` says otherwise)."""
    with transaction.atomic():
        suggestion = _open_suggestion(workspace, suggestion_id)
        pair = [suggestion.entity_a, suggestion.entity_b]
        if into is not None and into not in {e.pk for e in pair}:
            raise InvalidInput("`into` must be one of the suggested pair.")
        survivor = into or default_survivor(pair).pk
        other = next(e.pk for e in pair if e.pk != survivor)
        event = do_merge_entities(
            workspace=workspace, survivor_id=survivor, merged_ids=[other], actor=actor
        )
        MergeSuggestion.objects.filter(pk=suggestion.pk).update(
            status=SuggestionStatus.ACCEPTED, decided_by=actor, decided_at=timezone.now()
        )
    return event


def do_reject_suggestion(
    *, workspace: Workspace, suggestion_id: int, actor: User | None = None
) -> CurationEvent:
    """Not the same: the pair is never suggested or merged automatically again."""
    with transaction.atomic():
        suggestion = _open_suggestion(workspace, suggestion_id)
        event = do_mark_not_same(
            workspace=workspace,
            entity_id=suggestion.entity_a_id,
            other_id=suggestion.entity_b_id,
            actor=actor,
        )
        MergeSuggestion.objects.filter(pk=suggestion.pk).update(
            status=SuggestionStatus.REJECTED, decided_by=actor, decided_at=timezone.now()
        )
    return event


def do_set_aliases(
    *, workspace: Workspace, entity_id: int, names: Iterable[str], actor: User | None = None
) -> list[CurationEvent]:
    """Make the alias list exactly `names` (one event per alias added or removed)."""
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        kind = entity.type.name
        wanted = {entity_key(n, kind): " ".join(n.split()) for n in names if entity_key(n, kind)}
        current = dict(Alias.objects.filter(entity=entity).values_list("canonical", "name"))
        events = [
            do_remove_alias(workspace=workspace, entity_id=entity.pk, name=current[c], actor=actor)
            for c in sorted(set(current) - set(wanted))
        ]
        events += [
            do_add_alias(workspace=workspace, entity_id=entity.pk, name=wanted[c], actor=actor)
            for c in sorted(set(wanted) - set(current))
            if c != entity.canonical_name
        ]
    return events


def do_update_entity(
    *,
    workspace: Workspace,
    entity_id: int,
    name: str | None = None,
    type_name: str | None = None,
    aliases: Iterable[str] | None = None,
    actor: User | None = None,
) -> list[CurationEvent]:
    """Change what is given of an entity's name, type and alias list, in one transaction:
    each change is its own curation event (so each can be undone), returned in order. The
    API, the admin and the explorer all edit entities through here."""
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        events = []
        if name is not None and name != entity.name:
            events.append(
                do_rename_entity(workspace=workspace, entity_id=entity.pk, name=name, actor=actor)
            )
        if type_name is not None and type_name != entity.type.name:
            events.append(
                do_retype_entity(
                    workspace=workspace, entity_id=entity.pk, type_name=type_name, actor=actor
                )
            )
        if aliases is not None:
            events += do_set_aliases(
                workspace=workspace, entity_id=entity.pk, names=aliases, actor=actor
            )
    return events
