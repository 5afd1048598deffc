"""Parsing of the list parameters the graph reads take (`1,2,3`, `person,org`): one place
that bounds them and names the parameter in its error.
"""

from __future__ import annotations

from workspaces.errors import InvalidInput

# Ids a subgraph request may name, and nodes a neighbourhood may return.
MAX_GRAPH_NODES = 2000


def parse_ids(text: str | None, *, label: str, limit: int = MAX_GRAPH_NODES) -> list[int]:
    """`1,2,3` -> [1, 2, 3] (order kept, duplicates dropped); InvalidInput names `label`."""
    if not text or not text.strip():
        return []
    ids: dict[int, None] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isascii() or not part.isdigit() or len(part) > 18:
            raise InvalidInput(f"{label}: comma-separated entity ids, got {part[:40]!r}.")
        ids[int(part)] = None
        if len(ids) > limit:
            raise InvalidInput(f"{label}: at most {limit} ids.")
    return list(ids)


def parse_names(text: str | None) -> list[str] | None:
    """`works_for,part_of` -> ["works_for", "part_of"]; empty or missing -> None (any)."""
    if text is None:
        return None
    names = [part.strip() for part in text.split(",") if part.strip()]
    return list(dict.fromkeys(names))[:100] or None
