"""What a chunk is indexed as: its document's title and its heading path, then its own text.

Why: a chunk is cut from a page, and what the page is about is often said only in its title
and headings. The description chunk of a reference page ("Print lines that match
patterns…") never names its command, so neither its vector nor its words could be found by
that name. Both indexes therefore read a short *context* line before the chunk's text: the
title and the heading path, joined by SEPARATOR (U+203A, an angle quote). The text a
search shows, cites and extracts from stays the chunk's own (`Chunk.text`, an exact slice
of the document); only the vector and the full-text index see the context.

The context is kept short and says nothing twice:
- a page's first heading usually is its title without the site's name ("os.path — Common
  pathname manipulations" in the title "os.path — Common pathname manipulations — Python
  3.11 documentation"): the heading stands for the title then, so the words every page of
  the site shares are not in every chunk;
- a heading the chunk itself opens with (the chunk starts at its section) is not repeated;
- each part is cut to PART_MAX_CHARS and the whole to CONTEXT_MAX_CHARS (the middle of a
  deep path gives way first, then the end): text from documents is hostile, and the title
  must not eat the model's token budget;
- boilerplate (text the source repeats on every page) has none: it is never a search hit,
  and without a context its one text keeps one vector, copied to every page.

The model reads at most `budget` tokens (its max sequence length less [CLS] and [SEP]),
and chunks are cut to that budget already, so a long chunk with a context no longer fits:
the text's tail is left out explicitly (and counted in `IndexedText.truncated`) rather
than by the model silently (exact for a tokenizer whose counts add up, as the packaged
model's WordPiece does; within a token or two otherwise, which the model drops). The tail
of a chunk inside a section is also the head of the next one (CHUNK_OVERLAP_TOKENS), and
the full-text index still reads the whole text.

The full-text index reads the context at the weight of the text (`Chunk.search_vector`,
one generated tsvector over the context and then the text): a word of the title counts as
if the chunk said it once, which is what a reader of the page sees around it. A lower
weight would take raising the text's own (to_tsvector gives the lowest, D) and ranking with
weights of our own in the keyword signal, rescaling every score the fusion reads, for a
gain nobody measured; and the keyword tiers match regardless of weight anyway. The first
heading standing for the title keeps the words every page of a site repeats in its title
out of the index, where they would match everything (ts_rank_cd knows no rarity).

`RECIPE` names this recipe. Chunks record the recipe their vector was computed with
(`Chunk.embedding_recipe`), so a change of recipe is found by a query and re-embedded by
`manage.py backfill_embeddings`: bump it with any change here that changes what a chunk
is indexed as.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ingest.embeddings import TokenCounter

RECIPE = 1
SEPARATOR = " \u203a "  # an angle quote: one token of the model's vocabulary
PART_MAX_CHARS = 80
CONTEXT_MAX_CHARS = 160
# The context's share of the model's budget at most, however its characters tokenize.
CONTEXT_MAX_SHARE = 4  # a quarter
ELLIPSIS = "…"

_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
_HEADING_LINE = re.compile(r"#{1,6}\s")
# How far into a chunk its opening line and headings are looked for.
OPENING_CHARS = 400


@dataclass(frozen=True, slots=True)
class IndexedText:
    """A chunk as the indexes read it: `context` (title and heading path, stored on the
    chunk for the full-text index) and `text`, what the model embeds."""

    context: str
    text: str
    truncated: int = 0  # tokens of the chunk's text left out to fit the model

    @property
    def key(self) -> str:
        """SHA-256 of what the model reads: the same key, the same vector."""
        return hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).hexdigest()


def indexed_text(
    *,
    title: str,
    heading_path: Sequence[str],
    text: str,
    counter: TokenCounter,
    budget: int,
    boilerplate: bool = False,
) -> IndexedText:
    """The chunk `text` of a document called `title`, under `heading_path`, as it is indexed
    (the one recipe every place that embeds or indexes a chunk uses)."""
    context = chunk_context(
        title=title, heading_path=heading_path, text=text, boilerplate=boilerplate
    )
    embedded, truncated = _within_budget(context, text, counter=counter, budget=budget)
    return IndexedText(context=context, text=embedded, truncated=truncated)


def chunk_context(
    *, title: str, heading_path: Sequence[str], text: str, boilerplate: bool = False
) -> str:
    """The context line of a chunk: title and heading path, nothing twice, bounded (none
    for boilerplate). Only the first OPENING_CHARS of `text` are read."""
    if boilerplate:
        return ""
    parts = [_clean(part) for part in heading_path]
    parts = [part for part in parts if _words(part)]
    title = _clean(title)
    if _words(title) and not (parts and _stands_for(parts[0], title)):
        parts.insert(0, title)
    kept: list[str] = []
    for part in parts:
        if not any(_words(part) == _words(seen) for seen in kept):
            kept.append(part)
    opening = _opening(text)
    kept = [part for part in kept if not _inside(_words(part), opening)]
    return _bounded([_cut(part, PART_MAX_CHARS) for part in kept])


def _clean(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.casefold()))


def _inside(part: tuple[str, ...], whole: tuple[str, ...]) -> bool:
    """Whether the words `part` occur in `whole`, in order and next to each other."""
    n = len(part)
    return n > 0 and any(whole[i : i + n] == part for i in range(len(whole) - n + 1))


def _stands_for(heading: str, title: str) -> bool:
    """Whether a page's first heading can stand for its title: the title is the heading
    with the site's name before or after it, or the heading says all the title does."""
    h, t = _words(heading), _words(title)
    return t[: len(h)] == h or t[len(t) - len(h) :] == h or _inside(t, h)


def _opening(text: str) -> tuple[str, ...]:
    """The words of the chunk's first line and of the heading lines it opens with."""
    lines = [line.strip() for line in text[:OPENING_CHARS].splitlines() if line.strip()]
    opening = lines[:1]
    for line in lines[1:]:
        if not (_HEADING_LINE.match(opening[-1]) and _HEADING_LINE.match(line)):
            break
        opening.append(line)
    return _words(" ".join(opening))


def _cut(text: str, limit: int) -> str:
    """`text` cut at a word boundary to at most `limit` characters."""
    if len(text) <= limit:
        return text
    head = text[: limit - len(ELLIPSIS)]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip() + ELLIPSIS


def _bounded(parts: list[str]) -> str:
    """The parts joined in at most CONTEXT_MAX_CHARS: the middle of a deep path gives way
    first (one "…" for what is left out), then the end."""
    while len(parts) > 2 and len(SEPARATOR.join(parts)) > CONTEXT_MAX_CHARS:
        rest = parts[2:] if parts[1] == ELLIPSIS else parts[1:]
        if len(rest) <= 1:
            break
        parts = [parts[0], ELLIPSIS, *rest[1:]]
    return _cut(SEPARATOR.join(parts), CONTEXT_MAX_CHARS)


def _within_budget(
    context: str, text: str, *, counter: TokenCounter, budget: int
) -> tuple[str, int]:
    """The context, a newline and the text, in at most `budget` tokens: the context cut to
    a quarter of the budget at most, then the text's tail left out (how many tokens is the
    second value)."""
    if not context:
        return text, 0
    context_tokens, text_tokens = counter.count([context, text])
    most = max(budget // CONTEXT_MAX_SHARE, 1)
    if context_tokens > most:
        context = context[: counter.offsets(context)[most - 1][1]].rstrip() + ELLIPSIS
        context_tokens = counter.count([context])[0]
    room = budget - context_tokens
    if text_tokens <= room:
        return f"{context}\n{text}", 0
    offsets = counter.offsets(text)
    end = offsets[room - 1][1] if room > 0 else 0
    return f"{context}\n{text[:end]}", len(offsets) - max(room, 0)
