"""What a window's text says about its own structure: headings, definitions, code, tables.

Why: the parsers turn every format into Markdown-flavoured text (ingest/parsers/base.py):
headings are `#` lines, glossaries and API entries are a term line followed by a `: `
definition line, code is in backticks or fences, tables have a header row and a `---`
separator. What a document says about itself this way is far more reliable than a news-
trained NER model on technical text, so the offline extractor reads it first. This module
only finds the pieces (character offsets into the window text, no spaCy, no Django); the
extractor decides what becomes an entity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A fenced code block: ``` or ~~~ up to the matching fence (or the end of the window).
_FENCE = re.compile(r"^(```|~~~)[^\n]*\n.*?(?:^\1[ \t]*$|\Z)", re.M | re.S)
_INLINE_CODE = re.compile(r"(?<!`)`([^`\n]{1,200})`(?!`)")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.M)
_DEFINITION = re.compile(r"^(?P<term>[^\n:#|>-][^\n]{0,200})\n: (?P<definition>[^\n]+)$", re.M)
_TABLE_ROW = re.compile(r"^\|(.*)\|[ \t]*$", re.M)
_SEPARATOR_CELL = re.compile(r"^\s*:?-{3,}:?\s*$")
# Emphasis marks, but not the underscores inside identifiers ("run_in_executor").
_EMPHASIS = re.compile(r"(?<![\w*])(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1(?![\w*])")
# Nor a dunder name ("__init__"): technical text writes those far more often than bold.
_DUNDER = re.compile(r"(?<![\w*])__[A-Za-z][\w.]*?__(?![\w*])")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|])")
# Anchor glyphs documentation generators put next to headings ("Title¶", "Title #").
_GLYPHS = re.compile(r"\s*(?:[¶§🔗]|\uFE0F|\u200B|(?<=\s)#)+\s*$")


@dataclass(frozen=True, slots=True)
class Span:
    """A piece of the window: text[start:end] is what it says."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    title: Span  # the heading's words, without the `#` marks
    line: Span


@dataclass(frozen=True, slots=True)
class Definition:
    term: Span
    definition: Span


@dataclass(frozen=True, slots=True)
class Table:
    header: tuple[Span, ...]
    rows: tuple[tuple[Span, ...], ...]
    row_lines: tuple[Span, ...]


@dataclass(frozen=True, slots=True)
class Structure:
    code_blocks: tuple[Span, ...]
    code_spans: tuple[Span, ...]  # the inside of each `inline code` span
    headings: tuple[Heading, ...]
    definitions: tuple[Definition, ...]
    tables: tuple[Table, ...]

    def in_code_block(self, position: int) -> bool:
        return any(b.start <= position < b.end for b in self.code_blocks)


def read_structure(text: str) -> Structure:
    """Every structural piece of `text`; nothing inside a fenced block counts as prose."""
    blocks = tuple(Span(m.start(), m.end()) for m in _FENCE.finditer(text))

    def outside(position: int) -> bool:
        return not any(b.start <= position < b.end for b in blocks)

    spans = tuple(
        Span(m.start(1), m.end(1)) for m in _INLINE_CODE.finditer(text) if outside(m.start())
    )
    headings = tuple(
        Heading(len(m.group(1)), Span(m.start(2), m.end(2)), Span(m.start(), m.end()))
        for m in _HEADING.finditer(text)
        if outside(m.start())
    )
    definitions = tuple(
        Definition(Span(m.start("term"), m.end("term")), Span(m.start("definition"), m.end()))
        for m in _DEFINITION.finditer(text)
        if outside(m.start()) and m.group("term").strip()
    )
    return Structure(blocks, spans, headings, definitions, _tables(text, outside))


def _cells(text: str, line_start: int, inner: str, inner_start: int) -> tuple[Span, ...]:
    cells: list[Span] = []
    position = inner_start
    for cell in re.split(r"(?<!\\)\|", inner):
        left = len(cell) - len(cell.lstrip())
        right = len(cell.rstrip())
        cells.append(Span(position + left, position + max(left, right)))
        position += len(cell) + 1
    return tuple(cells)


def _tables(text: str, outside: object) -> tuple[Table, ...]:
    """Markdown tables whose second line is a `| --- |` separator (a header row)."""
    rows = [m for m in _TABLE_ROW.finditer(text) if outside(m.start())]  # type: ignore[operator]
    tables: list[Table] = []
    index = 0
    while index + 1 < len(rows):
        head, separator = rows[index], rows[index + 1]
        adjacent = text.count("\n", head.end(), separator.start()) == 1
        if not (adjacent and all(_SEPARATOR_CELL.match(c) for c in separator.group(1).split("|"))):
            index += 1
            continue
        body = []
        cursor = index + 2
        previous = separator
        while cursor < len(rows) and text.count("\n", previous.end(), rows[cursor].start()) == 1:
            body.append(rows[cursor])
            previous = rows[cursor]
            cursor += 1
        tables.append(
            Table(
                header=_cells(text, head.start(), head.group(1), head.start(1)),
                rows=tuple(_cells(text, r.start(), r.group(1), r.start(1)) for r in body),
                row_lines=tuple(Span(r.start(), r.end()) for r in body),
            )
        )
        index = cursor
    return tuple(tables)


def masked(text: str, structure: Structure) -> str:
    """`text` with code (fenced blocks and inline spans, backticks included) blanked out,
    same length and line breaks, so offsets still index `text`: the NER model reads prose
    only, and code is read by the code rules."""
    chars = list(text)
    pieces = [*structure.code_blocks, *(Span(s.start - 1, s.end + 1) for s in structure.code_spans)]
    for piece in pieces:
        for i in range(max(0, piece.start), min(len(chars), piece.end)):
            if chars[i] != "\n":
                chars[i] = " "
    # Markdown marks are no words: "# Title", "| cell |", "**bold**", ": definition".
    for heading in structure.headings:
        for i in range(heading.line.start, heading.title.start):
            chars[i] = " "
    return "".join(chars).replace("|", " ").replace("**", "  ")


def _without_emphasis(text: str) -> str:
    """Emphasis marks dropped, dunder names kept whole."""
    pieces = _DUNDER.split(text)
    dunders = [*_DUNDER.findall(text), ""]
    return "".join(
        _EMPHASIS.sub(r"\2", piece) + dunder for piece, dunder in zip(pieces, dunders, strict=True)
    )


def plain(text: str) -> str:
    """A heading or cell as words: no emphasis marks, no backticks, spaces collapsed."""
    text = _without_emphasis(text.replace("\\_", "_"))  # "\\_\\_init\\_\\_" is "__init__"
    text = _ESCAPE.sub(r"\1", text).replace("`", "")
    return _GLYPHS.sub("", " ".join(text.split()))
