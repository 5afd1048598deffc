"""Curation event payloads with their ids rewritten for an imported workspace.

A payload holds what the exact undo needs (knowledge/actions/curation/: entities.py,
merge.py, block.py, relations.py, types.py, undo.py): ids of entities, relations,
mentions, evidence, aliases, rules, suggestions, other events, and snapshots of rows with
their references. Each key is rewritten by what it names; an id whose row is not in the
archive (deleted since the event) is dropped from its list, or becomes null, and never
kept: an id of the exporting instance could name an unrelated row here. A removed
alias's row (`alias_row`, recreated with its own id by the undo) gets a fresh id of this
instance. Keys not listed here carry no ids and are copied as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workspaces.models import MAX_ID

ENTITY = "knowledge.Entity"
ENTITY_TYPE = "knowledge.EntityType"
RELATION = "knowledge.Relation"
RELATION_TYPE = "knowledge.RelationType"
MENTION = "knowledge.Mention"
EVIDENCE = "knowledge.RelationEvidence"
ALIAS = "knowledge.Alias"
RULE = "knowledge.CurationRule"
RELATION_RULE = "knowledge.RelationRule"
SUGGESTION = "knowledge.MergeSuggestion"
EVENT = "knowledge.CurationEvent"
DOCUMENT = "ingest.Document"

Lookup = Callable[[str, int], int | None]


class PayloadRemapper:
    """`lookup(label, old id)` gives a row's new id (None: not imported); `fresh_id(label)`
    reserves a new id of a table; `workspace_id` is the new workspace's."""

    def __init__(
        self, lookup: Lookup, *, fresh_id: Callable[[str], int], workspace_id: int
    ) -> None:
        self.lookup, self.fresh_id, self.workspace_id = lookup, fresh_id, workspace_id

    def one(self, label: str, value: Any) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_ID:
            return None
        return self.lookup(label, value)

    def many(self, label: str, values: Any) -> list[int]:
        if not isinstance(values, list):
            return []
        found = (self.one(label, v) for v in values)
        return [v for v in found if v is not None]

    def keyed(self, label: str, mapping: Any, value: Callable[[Any], Any]) -> dict[str, Any]:
        """A dict keyed by ids (as JSON strings)."""
        if not isinstance(mapping, dict):
            return {}
        out = {}
        for key, item in mapping.items():
            digits = str(key)
            new = (
                self.one(label, int(digits))
                if digits.isascii() and digits.isdigit() and len(digits) <= 19
                else None
            )
            if new is not None:
                out[str(new)] = value(item)
        return out

    def pairs(self, first: str, second: str, values: Any) -> list[list[int]]:
        out = []
        for pair in values if isinstance(values, list) else []:
            if isinstance(pair, list) and len(pair) == 2:
                a, b = self.one(first, pair[0]), self.one(second, pair[1])
                if a is not None and b is not None:
                    out.append([a, b])
        return out

    def snapshot(self, value: Any) -> Any:
        """An entity's or a relation's fields as an event saw them (relations have ends)."""
        if not isinstance(value, dict):
            return value
        out = dict(value)
        relation = "source_id" in value
        refs = (
            {"id": RELATION, "source_id": ENTITY, "target_id": ENTITY,
             "type_id": RELATION_TYPE, "merged_into_id": RELATION}
            if relation
            else {"id": ENTITY, "type_id": ENTITY_TYPE, "merged_into_id": ENTITY}
        )  # fmt: skip
        for key, label in refs.items():
            if key in out:
                out[key] = self.one(label, out[key])
        return out

    def alias_row(self, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {
            **value,
            "id": self.fresh_id(ALIAS),
            "workspace_id": self.workspace_id,
            "entity_id": self.one(ENTITY, value.get("entity_id")),
            "event_id": self.one(EVENT, value.get("event_id")),
        }

    def relations(self, value: Any) -> list[Any]:
        """A deletion's relation ids, or a merge's relation snapshots."""
        if not isinstance(value, list):
            return []
        if all(isinstance(item, dict) for item in value):
            return [self.snapshot(item) for item in value]
        return self.many(RELATION, value)

    def mentions(self, value: Any) -> Any:
        """A merge's {entity id: [mention ids]}, or a split's [mention ids]."""
        if isinstance(value, dict):
            return self.keyed(ENTITY, value, lambda ids: self.many(MENTION, ids))
        return self.many(MENTION, value)

    def evidence(self, value: Any) -> list[dict[str, Any]]:
        out = []
        for move in value if isinstance(value, list) else []:
            if isinstance(move, dict):
                out.append(
                    {**move, "ids": self.many(EVIDENCE, move.get("ids")),
                     "from": self.one(RELATION, move.get("from"))}
                )  # fmt: skip
        return out

    def aliases_deleted(self, value: Any) -> list[Any]:
        rows = [row for row in value if isinstance(row, dict)] if isinstance(value, list) else []
        return [{**row, "entity_id": self.one(ENTITY, row.get("entity_id"))} for row in rows]

    def remap(self, action: str, payload: Any) -> dict[str, Any]:
        if not isinstance(payload, dict):
            return {}
        out = dict(payload)
        for key, value in payload.items():
            handler = _HANDLERS.get(key)
            if key == "alias_created" and action != "rename":
                continue  # add-alias: a flag, not an id
            if handler is not None:
                out[key] = handler(self, value)
        return out


_HANDLERS: dict[str, Callable[[PayloadRemapper, Any], Any]] = {
    "survivor": PayloadRemapper.snapshot,
    "merged": lambda r, v: [r.snapshot(item) for item in v] if isinstance(v, list) else [],
    "before": PayloadRemapper.snapshot,
    "after": PayloadRemapper.snapshot,
    "mentions": PayloadRemapper.mentions,
    "names": lambda r, v: r.keyed(ENTITY, v, lambda names: names),
    "ends_curated": lambda r, v: r.keyed(ENTITY, v, lambda curated: curated),
    "relations": PayloadRemapper.relations,
    "evidence": PayloadRemapper.evidence,
    "aliases_moved": lambda r, v: r.pairs(ALIAS, ENTITY, v),
    "aliases_deleted": PayloadRemapper.aliases_deleted,
    "aliases_created": lambda r, v: r.many(ALIAS, v),
    "alias_created": lambda r, v: r.one(ALIAS, v),
    "alias": lambda r, v: r.one(ALIAS, v),
    "alias_row": PayloadRemapper.alias_row,
    "rules_moved": lambda r, v: r.pairs(RULE, ENTITY, v),
    "pins_lifted": lambda r, v: r.many(RULE, v),
    "rules_lifted": lambda r, v: r.many(RELATION_RULE, v),
    "suggestions": lambda r, v: r.many(SUGGESTION, v),
    "suggestions_rejected": lambda r, v: r.many(SUGGESTION, v),
    "pair": lambda r, v: r.many(ENTITY, v),
    "new_entity": lambda r, v: r.one(ENTITY, v),
    "entity": lambda r, v: r.one(ENTITY, v),
    "delete_event": lambda r, v: r.one(EVENT, v),
    "merge_event": lambda r, v: r.one(EVENT, v),
    "undid": lambda r, v: r.one(EVENT, v),
    "block_event": lambda r, v: r.one(EVENT, v),
    "document": lambda r, v: r.one(DOCUMENT, v),
}


def remap_type_change_events(remapper: PayloadRemapper, events: Any) -> list[int]:
    """A type merge's retype events, in order."""
    return remapper.many(EVENT, events)


def remap_type_change_conflicts(remapper: PayloadRemapper, kind: str, conflicts: Any) -> list[Any]:
    """The rows a type merge left, as [{"id", "name", "reason"}]: entities or relations."""
    label = ENTITY if kind == "entity" else RELATION
    rows = [c for c in conflicts if isinstance(c, dict)] if isinstance(conflicts, list) else []
    return [{**row, "id": remapper.one(label, row.get("id"))} for row in rows]
