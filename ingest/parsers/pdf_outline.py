"""A PDF's outline (its bookmarks) as the `#` headings its text never had.

Why: extracted PDF text is flat, every heading just another line, so chunks cannot say which
chapter they come from and the knowledge extractor sees no topics. Most long PDFs (books,
manuals, reports) carry an outline that names each chapter and section and the page it
starts on; that is the document's own table of contents, so it is turned into heading lines:
the line on that page that reads the same is marked as a heading, and a title the page text
does not show is put before the page's text.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from pypdf import PdfReader

logger = logging.getLogger(__name__)

MAX_ITEMS = 500
MAX_TITLE_CHARS = 200
MAX_LEVEL = 6
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class OutlineItem:
    title: str
    level: int  # 1 for a top-level bookmark, at most MAX_LEVEL
    page: int | None  # 1-based; None when the bookmark points nowhere this reader can follow

    def as_metadata(self) -> dict[str, Any]:
        return {"title": self.title, "level": self.level, "page": self.page}


def read_outline(reader: PdfReader) -> list[OutlineItem]:
    """The bookmarks in document order, at most MAX_ITEMS; [] when there are none or the
    outline is broken (it is a bonus, the text does not depend on it)."""
    try:
        outline = reader.outline
    except MemoryError:  # must reach the sandbox, which replaces the exhausted child
        raise
    except Exception as exc:  # a cyclic or malformed outline tree, too deep a recursion
        logger.info("PDF outline unreadable: %r", exc)
        return []
    items: list[OutlineItem] = []
    # (entries, depth) pairs: pypdf gives a list where a nested list holds the children of
    # the entry before it. Walked with a stack, however deep the file nests them.
    stack: list[tuple[list[Any], int]] = [(list(reversed(outline)), 1)]
    while stack and len(items) < MAX_ITEMS:
        entries, depth = stack[-1]
        if not entries:
            stack.pop()
            continue
        entry = entries.pop()
        if isinstance(entry, list):
            stack.append((list(reversed(entry)), depth + 1))
            continue
        item = _item(reader, entry, depth)
        if item is not None:
            items.append(item)
    return items


def _item(reader: PdfReader, entry: Any, depth: int) -> OutlineItem | None:
    title = _SPACES.sub(" ", str(getattr(entry, "title", "") or "")).strip()[:MAX_TITLE_CHARS]
    if not title:
        return None
    try:
        number = reader.get_destination_page_number(entry)
    except MemoryError:
        raise
    except Exception:
        number = None
    page = number + 1 if isinstance(number, int) and number >= 0 else None
    return OutlineItem(title=title, level=min(depth, MAX_LEVEL), page=page)


def with_headings(texts: list[str], outline: list[OutlineItem]) -> list[str]:
    """Each page's text with its bookmarks as `#` heading lines."""
    by_page: dict[int, list[OutlineItem]] = {}
    for item in outline:
        if item.page is not None and item.page <= len(texts):
            by_page.setdefault(item.page, []).append(item)
    return [_page_with_headings(t, by_page.get(n, [])) for n, t in enumerate(texts, start=1)]


def _page_with_headings(text: str, items: list[OutlineItem]) -> str:
    if not items:
        return text
    lines = text.split("\n") if text else []
    unmatched: list[str] = []
    after = 0
    for item in items:
        marks = "#" * item.level
        found = _matching_line(lines, item.title, after)
        if found is None:
            unmatched.append(f"{marks} {item.title}")
            continue
        lines[found] = f"{marks} {lines[found].strip()}"
        after = found + 1
    return "\n".join([*unmatched, *lines])


def _matching_line(lines: list[str], title: str, start: int) -> int | None:
    wanted = _SPACES.sub(" ", title).strip().casefold()
    for index in range(start, len(lines)):
        line = lines[index]
        if not line.startswith("#") and _SPACES.sub(" ", line).strip().casefold() == wanted:
            return index
    return None
