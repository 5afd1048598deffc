"""Evidence snippets cut around the span they are evidence for, for the templates to mark
(each piece is escaped by the template; nothing here builds HTML). Passages are made
readable by knowledge/answering/readable.py, which the answer's stream shares."""

from __future__ import annotations

from typing import Any


def highlighted(row: dict[str, Any]) -> dict[str, str]:
    """The snippet cut in three around the evidence span (document offsets, so relative to
    `snippet_start`): `before`, `match` (empty when the span is unknown) and `after`."""
    snippet: str = row["snippet"]
    start, end = row.get("char_start"), row.get("char_end")
    if start is None or end is None:
        return {"before": snippet, "match": "", "after": ""}
    lo = max(0, min(len(snippet), start - row["snippet_start"]))
    hi = max(lo, min(len(snippet), end - row["snippet_start"]))
    return {"before": snippet[:lo], "match": snippet[lo:hi], "after": snippet[hi:]}
