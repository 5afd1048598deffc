"""What a window's text says about its own structure: headings, definitions, code, tables.

Why: the parsers turn every format into Markdown-flavoured text (ingest/parsers/base.py):
headings are `#` lines, glossaries and API entries are a term line followed by a `: `
definition line, code is in backticks or fences, tables have a header row and a `---`
separator. What a document says about itself this way is far more reliable than a news-
trained NER model on technical text, so the offline extractor reads it first. This module
only finds the pieces (character offsets into the window text, no spaCy, no Django); the
extractor decides what becomes an entity.

Two vocabularies are learnt from the window's own code, because no list could name them for
every language a document may be about:
- placeholders, the slots of a command synopsis or a grammar (`table_name`, `<file>`,
  `target_list`): written in italics inside code, in angle brackets, or as the lower-case
  words of a synopsis line (one with optional parts, alternatives or a repeat: `[ ... ]`,
  `{ a | b }`, `...`, `::=`). They stand for what a reader fills in, never for a subject.
  Also the capital letters an example names its parts by ("commits A, B and C",
  "A---B---C", "X, Y, Z"; or one alone in code marks, `N`): variables of the example,
  not the C language or the R project a lone letter in prose may be.
- keywords, the upper-case words a language is written in (`SELECT`, `CREATE TABLE`,
  `IF NOT EXISTS`): upper-case words of code that sit on one line with another one.
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
# A slot in italics, the code inside the emphasis or the emphasis inside the code:
# *`table_name`*, _`file`_, `*name*`.
_ITALIC_CODE = re.compile(
    r"(?<![*\w])([*_])`([A-Za-z_][\w-]{0,80})`\1(?![*\w])|`([*_])([A-Za-z_][\w-]{0,80})\3`"
)
# A slot in angle brackets (escaped or not): <file>, \<pathspec>, `<name>`; never a type
# argument (List<String> follows a word) nor a capitalised name.
_ANGLE_SLOT = re.compile(r"(?<![\w<])\\?<([a-z][a-z0-9_-]{0,80})\\?>")
# What makes a line a synopsis or a grammar rule: an optional part with alternatives or a
# repeat, an optional part written with spaces inside ("[ TEMPORARY ]"), alternatives in
# braces, a repeat mark, or a grammar's "::=".
_SYNOPSIS_MARK = re.compile(
    r"\\?\[[^\]\n]*?[^\s\[.…]\s*(?:\||\.\.\.|…)|\\?\[ [^\]\n]* \\?\]"
    r"|\{[^}\n]*\|[^}\n]*\}|\[, ?\.\.\.|::="
)
# A lower-case word of a synopsis line: not an option (--name, -n), not a member or path
# (a.b, a/b), not a call, not in quotes (a grammar's literal terminals).
_SLOT_WORD = re.compile(r"(?<![\w\-./$'\"=])[a-z][a-z0-9_]*(?![\w\-./('\"=])")
_LINE_COMMAND = re.compile(r"[*_`]*([a-z][a-z0-9_]*)")
# A sentence's end inside a paragraph: prose, which a synopsis is not.
_PROSE = re.compile(r"[a-z][.!?] +[A-Z]")
# Single capital letters in a row (an example's variables): "A, B and C", "A B C D",
# "A---B---C", "`X`, `Y`, or `Z`", each letter maybe primed or numbered (A', B1).
_ONE_LETTER = r"[`*_]*[A-Z](?:'|\d)?[`*_]*"
_LETTER_RUN = re.compile(
    rf"(?<![\w'`*-]){_ONE_LETTER}"
    rf"(?:(?:\s*(?:,|-{{1,3}}|\.\.\.?|\s)\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+){_ONE_LETTER}){{2,}}"
    r"(?![\w-])"
)
# One capital letter in code marks: a variable, a type parameter, an option's value.
_LETTER_CODE = re.compile(r"(?<!`)`([A-Z])`(?!`)")
_LETTER = re.compile(r"[A-Z]")
# Upper-case words of code: no variable ($HOME), no assignment (PATH=…), no path or version
# (HTTP/1.1), no call (COUNT(…)).
_UPPER_WORD = re.compile(r"(?<![\w$./-])[A-Z][A-Z]+(?![\w=(./-])")
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
    # Learnt from the window's code (see the module's docstring): casefolded placeholder
    # names, and keywords as written.
    placeholders: frozenset[str] = frozenset()
    keywords: frozenset[str] = frozenset()

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
    return Structure(
        blocks,
        spans,
        headings,
        definitions,
        _tables(text, outside),
        placeholders=placeholders(text, blocks),
        keywords=keywords(text, blocks, spans),
    )


def placeholders(text: str, blocks: tuple[Span, ...]) -> frozenset[str]:
    """The window's slot names, casefolded: italic code, names in angle brackets, and the
    lower-case words of its synopsis lines (of a whole code block when one line of it is
    a synopsis, of the paragraph otherwise: a synopsis wraps onto several lines)."""
    found = {m.group(2) or m.group(4) for m in _ITALIC_CODE.finditer(text)}
    found.update(m.group(1) for m in _ANGLE_SLOT.finditer(text))
    for start, end in _synopses(text, blocks):
        piece = _ITALIC_CODE.sub(" ", text[start:end])
        for line in piece.splitlines():
            words = _SLOT_WORD.findall(line.replace("`", " ").replace("\\", " "))
            # A line that begins at the margin with a lower-case word begins with the
            # command it documents ("git frob [...]"), or a grammar rule with its name.
            command = _LINE_COMMAND.match(line)
            if command and words and words[0] == command.group(1):
                words = words[1:]
            found.update(words)
    found.update(letter_variables(text))
    return frozenset(name.casefold() for name in found if name)


def letter_variables(text: str) -> set[str]:
    """The capital letters an example names things by: three or more distinct ones in a
    row, in prose or code ("Given three commits A, B and C", "A---B---C topic"), and any
    one alone in code marks ("its merge `N`": code names no language by one letter)."""
    found = set(_LETTER_CODE.findall(text))
    for match in _LETTER_RUN.finditer(text):
        letters = set(_LETTER.findall(match.group(0)))
        if len(letters) >= 3:
            found.update(letters)
    return found


def _synopses(text: str, blocks: tuple[Span, ...]) -> list[tuple[int, int]]:
    pieces: list[tuple[int, int]] = []
    for match in _SYNOPSIS_MARK.finditer(text):
        block = next((b for b in blocks if b.start <= match.start() < b.end), None)
        if block is not None:
            piece = (block.start, block.end)
        else:
            before = text.rfind("\n\n", 0, match.start())
            after = text.find("\n\n", match.end())
            piece = (before + 2 if before >= 0 else 0, len(text) if after < 0 else after)
            if _PROSE.search(text, *piece):
                continue  # a paragraph of sentences that quotes an option, not a synopsis
        if piece not in pieces:
            pieces.append(piece)
    return pieces


def keywords(text: str, blocks: tuple[Span, ...], spans: tuple[Span, ...]) -> frozenset[str]:
    """Upper-case words of the window's code that share a line with another one: the words
    a language is written in ("CREATE TABLE", "IF NOT EXISTS"), not an environment variable
    or a constant named alone."""
    lines = [line for b in blocks for line in text[b.start : b.end].splitlines()]
    lines += [text[s.start : s.end] for s in spans]
    lines += [text[start:end] for start, end in _synopses(text, blocks)]
    found: set[str] = set()
    for line in lines:
        words = set(_UPPER_WORD.findall(line))
        if len(words) >= 2:
            found.update(words)
    return frozenset(found)


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
