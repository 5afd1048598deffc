"""The schema an extraction is asked for: the active types, and the hash that keys the
extraction cache on them. A plain value (no Django), so extractors can take it in threads;
`knowledge.selectors.schema.get_schema_snapshot` reads it from the registry.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SchemaSnapshot:
    """The active types offered to extraction, and the hash that keys the cache on them."""

    entity_types: tuple[tuple[str, str], ...]  # (name, description)
    relation_types: tuple[tuple[str, str], ...]
    hash: str

    @property
    def entity_type_names(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.entity_types)

    @property
    def relation_type_names(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.relation_types)
