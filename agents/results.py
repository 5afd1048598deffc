"""What a tool hands back, and the one rule bounding its size.

A tool answers a JSON object (the structured content an agent reads) and a text block (the
same JSON, or for `search` the framed context block). No answer may pass
MCP_MAX_RESULT_CHARS: the longest lists lose their last items first, then the longest
texts are cut, and the answer says so with `truncated: true` and a `truncation` marker
telling the agent how much was left out and how to get the rest.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings

MARKER = "[truncated: {n} more characters; narrow the query or use limit/offset]"
# Room kept for the marker and the `truncated` fields themselves.
_MARKER_ROOM = 160
_TEXT_CUT = " … "


@dataclass(slots=True)
class ToolAnswer:
    """A tool's answer before it goes on the wire. `text` None: the JSON of `data`."""

    data: dict[str, Any]
    text: str | None = None
    is_error: bool = False


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


def max_chars() -> int:
    return max(1000, settings.MCP_MAX_RESULT_CHARS)


def error_answer(message: str, *, code: str) -> ToolAnswer:
    """A tool error (`isError`): the agent reads what went wrong and may correct itself."""
    return ToolAnswer(
        data={"error": {"code": code, "message": message}}, text=message, is_error=True
    )


def marker(omitted: int) -> str:
    return MARKER.format(n=omitted)


def bound_data(data: dict[str, Any], limit: int | None = None) -> dict[str, Any]:
    """`data` with `truncated` set, cut to at most `limit` characters of JSON (default
    MCP_MAX_RESULT_CHARS) when it is longer, with the `truncation` marker."""
    limit = limit or max_chars()
    full = dumps(data)
    if len(full) <= limit:
        return {**data, "truncated": bool(data.get("truncated", False))}
    cut = copy.deepcopy(data)
    budget = max(0, limit - _MARKER_ROOM)
    size = len(full)
    while size > budget:
        excess = size - budget
        # Lists keep their first item while texts can give; then everything may go.
        if not (
            _drop_list_items(cut, excess, keep=1)
            or _cut_longest_text(cut, excess)
            or _drop_list_items(cut, excess, keep=0)
        ):
            break
        size = len(dumps(cut))
    cut["truncated"] = True
    cut["truncation"] = marker(len(full) - size)
    return cut


def bound_text(text: str, limit: int | None = None) -> tuple[str, bool]:
    """`text` cut to `limit` characters with the marker when longer; and whether it was."""
    limit = limit or max_chars()
    if len(text) <= limit:
        return text, False
    keep = max(0, limit - _MARKER_ROOM)
    return text[:keep] + "\n" + marker(len(text) - keep), True


def _lists(value: Any) -> Iterator[list[Any]]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _lists(item)
    elif isinstance(value, list):
        if value:
            yield value
        for item in value:
            yield from _lists(item)


def _texts(value: Any) -> Iterator[tuple[dict[str, Any] | list[Any], Any, str]]:
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for key, item in items:
        if isinstance(item, str):
            yield value, key, item
        else:
            yield from _texts(item)


def _drop_list_items(data: dict[str, Any], excess: int, *, keep: int) -> bool:
    """Drop the last items of the heaviest list longer than `keep` (enough of them to
    cover `excess` characters when that list can); False when there is none."""
    candidates = [items for items in _lists(data) if len(items) > keep]
    if not candidates:
        return False
    heaviest = max(candidates, key=lambda items: len(dumps(items)))
    dropped = 0
    while len(heaviest) > keep and dropped < excess:
        dropped += len(dumps(heaviest.pop())) + 1
    return True


def _cut_longest_text(data: dict[str, Any], excess: int) -> bool:
    """Shorten the longest string by `excess` characters (with a visible cut); False
    when no string is long enough to be worth cutting."""
    texts = list(_texts(data))
    if not texts:
        return False
    parent, key, text = max(texts, key=lambda found: len(found[2]))
    if len(text) <= len(_TEXT_CUT) * 4:
        return False
    keep = max(0, len(text) - excess - len(_TEXT_CUT))
    parent[key] = text[:keep] + _TEXT_CUT
    return True
