"""Split a document's text into chunks that fit the embedding model, at natural boundaries.

Why not fixed windows: a chunk that starts mid-sentence or mixes two sections embeds
poorly and makes bad evidence. This chunker
- reads Markdown-style structure (the parsers emit it): `#` headings start new sections and
  are kept as each chunk's heading path; blank lines separate paragraphs; lines separate
  list items and table rows;
- packs whole sentences into chunks of at most `max_tokens` tokens, counted with the
  embedding model's own tokenizer;
- cuts an over-long sentence at whitespace by token offsets, never inside a word (a single
  "word" longer than a whole chunk, e.g. a 10 MB line without spaces, is the one exception);
- repeats up to `overlap_tokens` of trailing sentences at the start of the next chunk within
  a section;
- never mixes boilerplate (given character ranges: text the source repeats on every page,
  ingest/boilerplate.py) with content: those ranges become chunks of their own, flagged
  `boilerplate`, so the content chunks stay whole while the ranges are kept for offsets;
- never leaves a heading alone in a chunk while something follows it: a heading joins the
  text after it (a first sentence too long to share a chunk with it is cut to make room),
  and headings that only boilerplate follows (a page's title over its menu) join that
  boilerplate, their text still the heading path of the content under them. A title alone
  was a chunk that matched every question about its page and answered none.
Every chunk is an exact slice of the text: `text[start:end] == chunk.text`.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ingest.embeddings import TokenCounter

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.MULTILINE)
_BLANK_LINES = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?…。])[\"')\]]*\s+")
# Generous for real text (English averages about 4 characters per token).
_MAX_CHARS_PER_TOKEN = 12


@dataclass(frozen=True, slots=True)
class ChunkSpan:
    start: int
    end: int
    text: str
    token_count: int
    heading_path: tuple[str, ...]
    boilerplate: bool = False

    @property
    def content_hash(self) -> str:
        return content_hash(self.text)


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(slots=True)
class _Unit:
    """A sentence or line fragment: the smallest thing packed whole into a chunk."""

    start: int
    end: int
    heading_path: tuple[str, ...]
    section: int  # units of different sections never share a chunk
    is_heading: bool
    tokens: int = 0
    boilerplate: bool = False
    opens_code: bool = False  # a ``` line opening a code block: never a chunk's last unit


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _lines(text: str) -> Iterator[tuple[int, int]]:
    start = 0
    for match in re.finditer(r"\n", text):
        yield start, match.start()
        start = match.end()
    yield start, len(text)


def _units(text: str) -> list[_Unit]:
    """Headings, then sentences of each line of each paragraph, with their sections. Inside
    a ``` code block nothing is a heading: a "# comment" there is code, and taking it for
    one cut examples apart and made the comment the heading path of what followed."""
    units: list[_Unit] = []
    path: list[tuple[int, str]] = []
    section = 0
    code = False
    for line_start, line_end in _lines(text):
        start, end = _trimmed(text, line_start, line_end)
        if start == end:
            continue
        fence = text.startswith("```", start)
        code = code != fence
        heading = None if code or fence else _HEADING.match(text, start, end)
        if heading:
            level = len(heading.group(1))
            path = [(lvl, title) for lvl, title in path if lvl < level] + [
                (level, heading.group(2))
            ]
            section += 1
            units.append(_Unit(start, end, tuple(t for _, t in path), section, True))
            continue
        headings = tuple(t for _, t in path)
        sentence_start = start
        for match in _SENTENCE_END.finditer(text, start, end):
            s, e = _trimmed(text, sentence_start, match.start())
            if s < e:
                units.append(_Unit(s, e, headings, section, False))
            sentence_start = match.end()
        s, e = _trimmed(text, sentence_start, end)
        if s < e:
            units.append(_Unit(s, e, headings, section, False))
        if fence and code:
            units[-1].opens_code = True
    return units


def _cut(text: str, start: int, end: int, limit: int) -> int:
    """Where a piece starting at `start` ends: the last whitespace before `limit` (or `end`
    if it fits); a hard cut at `limit` only when there is no whitespace at all."""
    if limit >= end:
        return end
    window = text[start:limit]
    space = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
    return start + space if space > 0 else max(limit, start + 1)


def _pieces(text: str, unit: _Unit, cuts: Iterator[int]) -> list[_Unit]:
    pieces = []
    start = unit.start
    for cut in cuts:
        s, e = _trimmed(text, start, cut)
        if s < e:
            pieces.append(
                _Unit(
                    s, e, unit.heading_path, unit.section, unit.is_heading,
                    boilerplate=unit.boilerplate,
                )
            )  # fmt: skip
        start = cut
    return pieces


def _split_by_chars(text: str, unit: _Unit, max_chars: int) -> list[_Unit]:
    """First cut for huge units (a 10 MB line), before any tokenizing: tokenizers map an
    absurdly long "word" to one unknown token, and tokenizing megabytes at once is slow."""

    def cuts() -> Iterator[int]:
        start = unit.start
        while start < unit.end:
            start = _cut(text, start, unit.end, start + max_chars)
            yield start

    return _pieces(text, unit, cuts())


def _split_by_tokens(text: str, unit: _Unit, counter: TokenCounter, max_tokens: int) -> list[_Unit]:
    """Cut a unit with more tokens than a chunk at whitespace, by the tokenizer's offsets,
    and count each piece's tokens."""
    starts = [unit.start + s for s, _ in counter.offsets(text[unit.start : unit.end])]

    def cuts() -> Iterator[int]:
        start, index = unit.start, 0
        while start < unit.end:
            while index < len(starts) and starts[index] < start:
                index += 1
            limit = starts[index + max_tokens] if index + max_tokens < len(starts) else unit.end
            start = _cut(text, start, unit.end, limit)
            yield start

    pieces = _pieces(text, unit, cuts())
    if counter.additive:
        # A piece is cut at whitespace, which no token of an additive tokenizer crosses: its
        # tokens are the offsets that start inside it (tokenizing it again cost a third of
        # the chunker's time on a 10 MB line).
        for piece in pieces:
            piece.tokens = bisect.bisect_left(starts, piece.end) - bisect.bisect_left(
                starts, piece.start
            )
        return pieces
    counts = counter.count([text[p.start : p.end] for p in pieces])
    for piece, count in zip(pieces, counts, strict=True):
        piece.tokens = count
    return pieces


def _mark_boilerplate(units: list[_Unit], ranges: Sequence[tuple[int, int]]) -> list[_Unit]:
    """Flag the units lying inside one of the (sorted, disjoint) ranges, and start a new
    section wherever the flag changes: no chunk, and no overlap, crosses that border."""
    if not ranges:
        return units
    starts = [start for start, _ in ranges]
    for unit in units:
        index = bisect.bisect_right(starts, unit.start) - 1
        unit.boilerplate = index >= 0 and unit.end <= ranges[index][1]
    _headings_join_boilerplate(units)
    section, previous = 0, None
    for unit in units:
        if previous is None or unit.section != previous[0] or unit.boilerplate != previous[1]:
            section += 1
        previous = (unit.section, unit.boilerplate)
        unit.section = section
    return units


def _headings_join_boilerplate(units: list[_Unit]) -> None:
    """Flag the headings directly followed by boilerplate: with no content of their own
    before it, they would be a chunk of one heading; their content keeps them as its path."""
    following_boilerplate = False
    for unit in reversed(units):
        if unit.boilerplate:
            following_boilerplate = True
        elif unit.is_heading and following_boilerplate:
            unit.boilerplate = True
        else:
            following_boilerplate = False


def chunk_text(
    text: str,
    *,
    counter: TokenCounter,
    max_tokens: int,
    overlap_tokens: int = 0,
    boilerplate: Sequence[tuple[int, int]] = (),
) -> list[ChunkSpan]:
    """Chunks of `text`, in order; see the module docstring for the rules. `boilerplate`:
    sorted, disjoint (start, end) character ranges that become chunks of their own."""
    if max_tokens < 8:
        raise ValueError("max_tokens must be at least 8")
    max_chars = max_tokens * _MAX_CHARS_PER_TOKEN
    candidates: list[_Unit] = []
    for unit in _mark_boilerplate(_units(text), boilerplate):
        if unit.end - unit.start > max_chars:
            candidates.extend(_split_by_chars(text, unit, max_chars))
        else:
            candidates.append(unit)
    units: list[_Unit] = []
    counts = counter.count([text[u.start : u.end] for u in candidates])
    # Tokens of the headings (and a code block's opening fence) right before the unit, which
    # it must leave room for.
    lead = 0
    for unit, tokens in zip(candidates, counts, strict=True):
        budget = max_tokens - lead if max_tokens - lead >= max_tokens // 2 else max_tokens
        leads = unit.is_heading or (unit.opens_code and lead > 0)
        lead = lead + tokens if leads else 0
        if tokens <= (max_tokens if leads else budget):
            unit.tokens = tokens
            units.append(unit)
            continue
        units.extend(_split_by_tokens(text, unit, counter, budget))
    groups = list(
        _pack(units, max_tokens=max_tokens, max_chars=max_chars, overlap_tokens=overlap_tokens)
    )
    return _finalize(text, groups, counter=counter, max_tokens=max_tokens)


def _finalize(
    text: str, groups: list[list[_Unit]], *, counter: TokenCounter, max_tokens: int
) -> list[ChunkSpan]:
    """Exact token counts for whole chunks (in one batch); a group whose parts summed under
    the budget but whose whole does not (seams can add a token) is split in two.

    With an additive counter (ingest/embeddings.py) a group whose units are all separated
    by whitespace has exactly the sum of their counts: only the other groups (a hard cut
    inside a word) are tokenized again. Tokenizing every chunk a second time cost as much as
    counting the sentences did, and the model tokenizes the chunk once more anyway."""
    bodies = [text[g[0].start : g[-1].end] for g in groups]
    exact_counts: list[int | None] = (
        [sum(u.tokens for u in g) if _whitespace_seams(text, g) else None for g in groups]
        if getattr(counter, "additive", False)
        else [None] * len(groups)
    )
    missing = [i for i, n in enumerate(exact_counts) if n is None]
    for i, n in zip(missing, counter.count([bodies[i] for i in missing]), strict=True):
        exact_counts[i] = n
    chunks: list[ChunkSpan] = []
    for group, body, exact in zip(groups, bodies, exact_counts, strict=True):
        assert exact is not None
        if exact > max_tokens and len(group) > 1:
            chunks.extend(
                _finalize(text, [group[:-1], group[-1:]], counter=counter, max_tokens=max_tokens)
            )
            continue
        path = group[-1].heading_path or group[0].heading_path
        chunks.append(
            ChunkSpan(group[0].start, group[-1].end, body, exact, path, group[0].boilerplate)
        )
    return chunks


def _whitespace_seams(text: str, group: list[_Unit]) -> bool:
    """Whether only spaces, tabs and line ends separate each unit of the group from the
    next: not a hard cut (nothing between them), not a closing quote left between two
    sentences, not a control character a tokenizer's normaliser deletes (which would join
    the words on either side)."""
    return all(
        a.end < b.start and not text[a.end : b.start].strip(" \t\n\r")
        for a, b in itertools.pairwise(group)
    )


def _section_remainders(units: Sequence[_Unit]) -> list[int]:
    """For each unit, the tokens from it to the end of its section (inclusive)."""
    remaining = [0] * len(units)
    running = 0
    for i in range(len(units) - 1, -1, -1):
        if i == len(units) - 1 or units[i + 1].section != units[i].section:
            running = 0
        running += units[i].tokens
        remaining[i] = running
    return remaining


def _target(remaining: int, max_tokens: int) -> int:
    """Spread a section evenly over as few chunks as fit: 300 tokens with a 254 budget make
    two chunks of ~150, not 254 + 46. Even chunks embed with less padding and make better
    evidence than a long chunk followed by a scrap."""
    pieces = max(1, -(-remaining // max_tokens))
    return min(max_tokens, -(-remaining // pieces))


def _pack(
    units: Sequence[_Unit], *, max_tokens: int, max_chars: int, overlap_tokens: int
) -> Iterator[list[_Unit]]:
    remaining = _section_remainders(units)
    current: list[_Unit] = []
    total = 0
    target = _target(remaining[0], max_tokens) if units else max_tokens
    for index, unit in enumerate(units):
        new_section = bool(current) and unit.section != current[-1].section
        # Headings and a code block's opening fence are no body: they wait for what follows.
        body_so_far = any(not (u.is_heading or u.opens_code) for u in current)
        if new_section and not body_so_far:
            target = _target(remaining[index] + total, max_tokens)
        # Headings alone wait for their first unit, which was cut to fit beside them.
        too_long = body_so_far and unit.end - current[0].start > max_chars
        over = total + unit.tokens > max_tokens or (
            total >= target and body_so_far and not unit.is_heading
        )
        other_kind = bool(current) and unit.boilerplate != current[-1].boilerplate
        if current and (over or too_long or other_kind or (new_section and body_so_far)):
            # A code block's opening fence goes with its code, not at the end of the chunk.
            held = (
                [current.pop()]
                if len(current) > 1
                and current[-1].opens_code
                and not (new_section or other_kind)
                and current[-1].tokens + unit.tokens <= max_tokens
                else []
            )
            yield current
            carried: list[_Unit] = []
            if overlap_tokens and not new_section:
                budget = overlap_tokens
                for previous in reversed(current):
                    if previous.is_heading or previous.tokens > budget:
                        break
                    carried.insert(0, previous)
                    budget -= previous.tokens
                if sum(u.tokens for u in [*carried, *held]) + unit.tokens > max_tokens:
                    carried = []
            current = carried + held
            total = sum(u.tokens for u in current)
            target = _target(remaining[index] + total, max_tokens)
        elif not current:
            target = _target(remaining[index], max_tokens)
        current.append(unit)
        total += unit.tokens
    if current:
        yield current
