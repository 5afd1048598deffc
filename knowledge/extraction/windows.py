"""Extraction windows: consecutive chunks of one document, about EXTRACTION_WINDOW_TOKENS
long, and the way back from a place in a window to the chunk and characters it came from.

Chunks are sized for the embedding model (a few hundred tokens); sending each to the LLM
would repeat the prompt's fixed part for every few sentences. A window is the document's
text from its first chunk's start to its last chunk's end (overlapping chunk text appears
once), so its hash depends only on that text.

Window ends are content-defined: a window closes when the next chunk would overflow the
target, or once it holds three quarters of the target and the last chunk's hash says
"boundary" (so windows average close to the target). After
an edit, boundaries line up again within a window or two, so a change in one paragraph
re-extracts the windows around it, not the rest of the document.
"""

from __future__ import annotations

import hashlib
import json
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Protocol

from knowledge.extraction.structure import read_structure


class ChunkLike(Protocol):
    # Read-only properties, so Django model instances (whose fields are typed wider) fit.
    @property
    def pk(self) -> Any: ...
    @property
    def ordinal(self) -> int: ...
    @property
    def char_start(self) -> int: ...
    @property
    def char_end(self) -> int: ...
    @property
    def token_count(self) -> int: ...
    @property
    def content_hash(self) -> str: ...


@dataclass(frozen=True, slots=True)
class WindowContext:
    """What the document says around a window, for extractors that read structure: its
    title (the page's subject), the headings the window sits under, and the text of the
    links to other pages of the same site that occur in the window. Part of the window's
    hash, because the offline extractor's output depends on it."""

    title: str = ""
    headings: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    # The document has code somewhere: its names are typed as technical text's are, in
    # every window, so one name gets one type throughout the document.
    technical: bool = False
    # What the whole document's code says (document_vocabulary): the slot names of its
    # synopses and the keywords of its code language, so a window without the synopsis
    # (a long page's parameter list) still knows them.
    placeholders: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()

    def key(self) -> str:
        fields: list[object] = [self.title, list(self.headings), list(self.links), self.technical]
        if self.placeholders or self.keywords:  # older contexts hash as they always did
            fields += [list(self.placeholders), list(self.keywords)]
        return json.dumps(fields, ensure_ascii=False)


NO_CONTEXT = WindowContext()

MAX_VOCABULARY = 200
VOCABULARY_CHARS = 200_000


def document_vocabulary(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(placeholders, keywords) of a document's code, for its windows' contexts: what
    structure.py learns from one window, learnt from the first VOCABULARY_CHARS of the
    document, at most MAX_VOCABULARY of each (sorted, so the context hashes stably)."""
    structure = read_structure(text[:VOCABULARY_CHARS])
    return (
        tuple(sorted(structure.placeholders))[:MAX_VOCABULARY],
        tuple(sorted(structure.keywords))[:MAX_VOCABULARY],
    )


@dataclass(frozen=True, slots=True)
class Window:
    chunk_ids: tuple[int, ...]
    # (chunk id, document char start, document char end), in order.
    chunk_spans: tuple[tuple[int, int, int], ...]
    start: int  # document offset of text[0]
    end: int
    text: str
    tokens: int
    hash: str
    context: WindowContext = NO_CONTEXT

    def chunk_for(self, start: int, end: int) -> int:
        """The chunk holding document span [start, end): one holding it whole if any, else
        the one holding its start."""
        for chunk_id, c_start, c_end in self.chunk_spans:
            if c_start <= start and end <= c_end:
                return chunk_id
        for chunk_id, c_start, c_end in self.chunk_spans:
            if c_start <= start < c_end:
                return chunk_id
        return self.chunk_ids[0]


def window_hash(text: str, context: WindowContext = NO_CONTEXT) -> str:
    """The window's cache key: its text, and its context when it has one (a window with no
    context hashes exactly as before contexts existed)."""
    if context != NO_CONTEXT:
        text = f"{text}\x00{context.key()}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def with_context(window: Window, context: WindowContext) -> Window:
    """The same window, read in `context` (and hashed with it)."""
    return replace(window, context=context, hash=window_hash(window.text, context))


def build_windows(
    document_text: str, chunks: Sequence[ChunkLike], *, target_tokens: int
) -> list[Window]:
    ordered = sorted(chunks, key=lambda c: c.ordinal)
    groups: list[list[ChunkLike]] = []
    current: list[ChunkLike] = []
    tokens = 0
    for chunk in ordered:
        if current and tokens + chunk.token_count > target_tokens:
            groups.append(current)
            current, tokens = [], 0
        current.append(chunk)
        tokens += chunk.token_count
        if tokens >= target_tokens * 3 // 4 and int(chunk.content_hash[:8] or "0", 16) % 2 == 0:
            groups.append(current)
            current, tokens = [], 0
    if current:
        groups.append(current)
    windows = []
    for group in groups:
        start = min(c.char_start for c in group)
        end = max(c.char_end for c in group)
        text = document_text[start:end]
        windows.append(
            Window(
                chunk_ids=tuple(int(c.pk or 0) for c in group),
                chunk_spans=tuple((int(c.pk or 0), c.char_start, c.char_end) for c in group),
                start=start,
                end=end,
                text=text,
                tokens=sum(c.token_count for c in group),
                hash=window_hash(text),
            )
        )
    return windows


MAX_OCCURRENCES = 20


def find_occurrences(
    name: str, text: str, *, limit: int = MAX_OCCURRENCES
) -> list[tuple[int, int]]:
    """Where `name` occurs in `text`: whole-word, case-insensitive, any whitespace between
    its words; failing that, anywhere case-insensitively. At most `limit` places."""
    words = name.split()
    if not words:
        return []
    flexible = r"\s+".join(re.escape(word) for word in words)
    for pattern in (rf"(?<!\w){flexible}(?!\w)", flexible):
        found = [m.span() for m in re.finditer(pattern, text, flags=re.IGNORECASE)][:limit]
        if found:
            return found
    return []


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n(?=\s*[-*#•]|\s*\d+[.)])")


@lru_cache(maxsize=32)
def sentence_bounds(text: str) -> tuple[tuple[int, int], ...]:
    """Sentence spans of a window (cached: every relation of a window asks again)."""
    bounds, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        if match.start() > start:
            bounds.append((start, match.start()))
        start = match.end()
    if start < len(text):
        bounds.append((start, len(text)))
    return tuple(bounds)


def relation_span(
    text: str, source_places: list[tuple[int, int]], target_places: list[tuple[int, int]]
) -> tuple[int, int] | None:
    """The sentence (or consecutive sentences, at most 3) holding the closest pair of
    occurrences of a relation's two endpoints, or None when they are not near each other."""
    if not source_places or not target_places:
        return None
    best = min(
        ((s, t) for s in source_places for t in target_places),
        key=lambda pair: abs(pair[0][0] - pair[1][0]),
    )
    lo, hi = min(best[0][0], best[1][0]), max(best[0][1], best[1][1])
    sentences = sentence_bounds(text)
    first = bisect_right(sentences, (lo, float("inf"))) - 1
    covering = [
        i
        for i in range(max(0, first), len(sentences))
        if sentences[i][0] < hi and sentences[i][1] > lo
    ]
    if not covering or covering[-1] - covering[0] > 2:
        return None
    return sentences[covering[0]][0], sentences[covering[-1]][1]
