"""Which entity an extracted name is: curation rules first, then the cheap tiers.

Order (cheapest and most authoritative first), for each (name, type):

1. a blocked name (in that type, or in every type) is never an entity again;
2. a name pinned by curation (a merge, a rename, an alias added by a person) goes to the
   entity it is pinned to, whatever became of it since (followed through later merges);
3. the alias table;
4. an active entity with the same canonical name and type;
5. otherwise a new entity (unless the source is known-only).

Entities of different types stay apart; only a person merges them (the pin of a retype
applies in every type). The whole batch is resolved with a fixed number of queries.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Q

from knowledge.canonical import canonical_name
from knowledge.models import (
    Alias,
    CurationRule,
    Entity,
    EntityState,
    EntityType,
    RuleKind,
)
from workspaces.models import Workspace

Key = tuple[str, int]  # (canonical name, entity type id)


def name_key(name: str) -> str:
    return canonical_name(name)


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
        text = name_key(name)
        if text:
            keys.setdefault((text, entity_type.pk), (name.strip()[:300], entity_type))
    if not keys:
        return {}
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
        for e in Entity.objects.for_workspace(workspace).filter(
            Q(pk__in=candidates) | Q(state=EntityState.ACTIVE, canonical_name__in=canon)
        )
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
            entity = exact.get(key)
        if entity is not None:
            found[key] = entity
        else:
            missing.append(key)
    if missing and create:
        # Sorted, so two workers inserting overlapping sets lock index entries in one order;
        # ON CONFLICT DO NOTHING, so they create one entity between them.
        Entity.objects.bulk_create(
            [
                Entity(
                    workspace=workspace,
                    name=keys[key][0],
                    canonical_name=key[0],
                    type=keys[key][1],
                )
                for key in sorted(missing)
            ],
            ignore_conflicts=True,
        )
        for entity in Entity.objects.for_workspace(workspace).filter(
            state=EntityState.ACTIVE, canonical_name__in={text for text, _ in missing}
        ):
            made = (entity.canonical_name, entity.type_id)
            if made in keys and made not in found:
                found[made] = entity
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
