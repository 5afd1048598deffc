"""Entities and relations a document states through its structure, for the offline extractor.

Why: what a documentation page says about itself is more reliable than statistical NER on
technical text. Its title is its subject; a heading names a topic that is part of the
page's; a glossary entry or an API entry ("`asyncio.gather(*aws)`" over ": Run awaitable
objects …") defines a term; `package.module.function` in code is an API whose dotted parents
contain it; a link to another page of the site is a reference, with the sentence it sits in
as evidence; the first column of a table with a header row names the rows' subjects.

What a page only uses to write about something is no subject of it: the slots of its
synopses and grammars (`table_name`, `<file>`) and the keywords of the language its code is
written in (`if`, `return`, `SELECT`) are left out (structure.py learns both from the
window's code), unless the page is about the word itself: a keyword the title or a top
heading names is the page's subject ("SELECT", "The return statement").

Everything is collected in a `Collector` that the NER pass writes to as well, so one name
gets one type per window (the first, most reliable, source wins: structure before NER).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from itertools import pairwise

from knowledge.extraction.entity_types import CODE_TYPE, FALLBACK_TYPE, active_type
from knowledge.extraction.noise import (
    CODE_NAME,
    KEYWORDS,
    is_dictionary_word,
    rejection,
    words_of,
)
from knowledge.extraction.structure import Heading, Span, Structure, plain
from knowledge.extraction.types import ExtractedRelation
from knowledge.extraction.windows import WindowContext

MAX_DESCRIPTION_CHARS = 300
MAX_HEADING_WORDS = 6
MAX_RELATED_PER_DEFINITION = 5
STRUCTURE_STRENGTH = 7.0
REFERENCE_TYPE = "references"
PART_OF_TYPE = "part_of"
RELATED_TYPE = "related_to"

# Words Sphinx and similar generators print before an API name in its entry.
_SIGNATURE_PREFIXES = re.compile(
    r"^(?:(?:abstract(?:method)?|async|await(?:able)?|class|classmethod|coroutine|data|"
    r"decorator|exception|final|function|method|property|static(?:method)?|attribute|"
    r"module|type)\s+)+"
)
_IDENTIFIER_CALL = re.compile(r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*(\(.*\))?\s*(?:->.*)?$")
_NUMBERING = re.compile(
    r"^(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.|(?:chapter|part|appendix|section)\s+\w+[.:]?)\s+", re.I
)
# The closed-class words that make a heading a clause or a contrast rather than the name
# of one topic: "Who Rust Is For", "What It Does", "Traits vs. Generics". English function
# words, the same for every site. ("and" is no such word: "Power and logarithmic functions"
# and "Coroutines and Tasks" are one topic each.)
_NOT_ONE_TOPIC = re.compile(
    r"(?:^|\s)(?:vs\.?|versus|who|what|when|where|why|how|which|is|are|was|were|be"
    r"|can|does|do|will|should|must|it|its|we|you|your|they|their|this|these|those|our)(?=\s|$)",
    re.I,
)
_WORD = re.compile(r"\w+")
# Sphinx's version notes: metadata of an entry, never what it is about.
_VERSION_NOTE = re.compile(
    r"(?:(?:New|Changed|Added) )?in version \S+|Deprecated since version \S+", re.IGNORECASE
)
# A statement's leading block mark: a definition's ": ", a list item's "- " or "2. ".
_LEADING_MARK = re.compile(r"^(?::|[-*+•]|\d{1,3}[.)])\s+")
_TITLE_SEPARATORS = re.compile(r"\s+[—–|]\s+|\s+-\s+")  # noqa: RUF001 (dashes)
_GENERIC_LINK_TEXT = frozenset(
    ("here", "this", "link", "more", "docs", "documentation", "read more", "this page", "below")
)
# Placeholder names examples use for their own variables: "x.append", "self.name".
_VARIABLE_HEADS = frozenset(("self", "cls", "obj", "object", "foo", "bar", "baz", "spam", "eggs"))


@dataclass(slots=True)
class Found:
    name: str
    type: str
    description: str
    spans: list[tuple[int, int]] = field(default_factory=list)
    # The description is the name's own definition (a glossary or API entry's), not a
    # statement that merely names it: entity descriptions put these first.
    defines: bool = False


class Collector:
    """The window's entities (one per casefolded name) and relations, deduplicated."""

    def __init__(self, active: Collection[str]) -> None:
        self.active = set(active)
        self.entities: dict[str, Found] = {}
        self.relations: list[ExtractedRelation] = []
        self._related: set[tuple[str, str, str]] = set()

    def add(
        self,
        name: str,
        wanted_type: str,
        span: tuple[int, int] | None,
        description: str = "",
        *,
        defines: bool = False,
    ) -> Found | None:
        """The window's entity of the name, its first description kept, unless this one is
        the name's definition and the kept one is not."""
        key = name.casefold()
        found = self.entities.get(key)
        if found is None:
            entity_type = active_type(wanted_type, self.active)
            if entity_type is None:
                return None
            found = self.entities[key] = Found(
                name, entity_type, description[:2000], defines=defines and bool(description)
            )
        elif description and (not found.description or (defines and not found.defines)):
            found.description = description[:2000]
            found.defines = defines
        if span is not None and span not in found.spans and len(found.spans) < 20:
            found.spans.append(span)
        return found

    def relate(
        self, source: Found, target: Found, type_name: str, span: tuple[int, int], text: str
    ) -> None:
        if source.name.casefold() == target.name.casefold():
            return
        low, high = sorted((source.name.casefold(), target.name.casefold()))
        if type_name == RELATED_TYPE:  # undirected: one per pair
            key = (low, high, type_name)
        else:
            key = (source.name.casefold(), target.name.casefold(), type_name)
        if key in self._related:
            return
        self._related.add(key)
        self.relations.append(
            ExtractedRelation(
                source=source.name,
                target=target.name,
                type=type_name,
                description=describe(text, *span),
                keywords=(type_name.replace("_", " "),),
                strength=STRUCTURE_STRENGTH,
                span=span,
            )
        )


class Sentences:
    """Sentence bounds of the window, found by offset (headings and table rows are lines,
    and lines are never merged into one sentence by the parser's splitter here)."""

    def __init__(
        self,
        bounds: Iterable[tuple[int, int]],
        *,
        in_code_block: Callable[[int], bool] = lambda _: False,
    ) -> None:
        self.bounds = sorted(bounds)
        self.starts = [start for start, _ in self.bounds]
        self.in_code_block = in_code_block

    def at(self, position: int, text: str) -> tuple[int, int]:
        """The statement around `position`: its sentence, never past its line (a heading or
        a table row is its own statement). A position in no sentence is in code, which the
        parser never saw: from there to the end of the sentence that follows on its line
        ("`foo()` returns…"), or else its whole line (a definition's term). Prose wrapped
        over several lines is one line here (`paragraph_line`)."""
        if self.in_code_block(position):
            line_start, line_end = physical_line(text, position)
        else:
            line_start, line_end = paragraph_line(text, position)
        index = bisect_right(self.starts, position) - 1
        if index >= 0 and self.bounds[index][0] <= position < self.bounds[index][1]:
            start, end = self.bounds[index]
        elif index + 1 < len(self.bounds) and self.bounds[index + 1][0] < line_end:
            start, end = position, self.bounds[index + 1][1]
        else:
            start, end = line_start, line_end
        return max(start, line_start), min(end, line_end) if end > line_start else line_end


# A line that begins a block of its own: a heading, a table row, a list item, a fence, a
# definition (": "), a quote.
_BLOCK_LINE = re.compile(r"[ \t]*(?:#|\||[-*+\u2022][ \t]|\d+[.)][ \t]|```|~~~|:[ \t]|>)")


def physical_line(text: str, position: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return start, len(text) if end < 0 else end


def paragraph_line(text: str, position: int) -> tuple[int, int]:
    """The line around `position` with the lines its paragraph was wrapped onto: the parsers
    keep a page's own line breaks inside a paragraph or list item, and a statement cut at
    them ended mid-sentence ("… now raises a ValueError if the number of digits in string
    form is"). A heading or table row stays one line; a blank line or a line that begins a
    block ends the paragraph."""
    start, end = physical_line(text, position)
    if _line_opens(text, start, end, ("#", "|")):
        return start, end
    while start > 0 and not _BLOCK_LINE.match(text, start):
        before = physical_line(text, start - 1)
        if not text[before[0] : before[1]].strip() or _line_opens(text, *before, ("#", "|", "```")):
            break
        start = before[0]
    while end < len(text):
        after = physical_line(text, end + 1)
        if not text[after[0] : after[1]].strip() or _BLOCK_LINE.match(text, after[0]):
            break
        end = after[1]
    return start, end


def _line_opens(text: str, start: int, end: int, marks: tuple[str, ...]) -> bool:
    """Whether the line begins with one of `marks` ("#" a heading, "|" a table row, "```" a
    fence): a line that nothing continues."""
    return text[start:end].lstrip().startswith(marks)


def description(flat: str) -> str:
    """A one-line statement as a description: without the mark of the block it begins
    (definition, list item), cut to MAX_DESCRIPTION_CHARS at a word when one is near."""
    flat = _LEADING_MARK.sub("", flat, count=1)
    if len(flat) <= MAX_DESCRIPTION_CHARS:
        return flat
    head = flat[: MAX_DESCRIPTION_CHARS - 1]
    space = head.rfind(" ")
    return (head[:space] if space > MAX_DESCRIPTION_CHARS // 2 else head).rstrip() + "…"


def says_what_it_is(definition: str) -> bool:
    """Whether a definition says what its term is, rather than where to read it: the
    glossary's "keyword argument" entry is "See argument." (then the term's other
    statements describe it, as for a term with no definition)."""
    return len(_WORD.findall(definition)) >= 3 and not _POINTER.match(definition)


_POINTER = re.compile(r"(?:see|cf\.?|refer to)\b", re.IGNORECASE)


def describe(text: str, start: int, end: int) -> str:
    """One statement of the window as a description: words only (structure.plain). A
    statement in a table row is the row, its first cell naming the rest ("itertools:
    Functions creating iterators for efficient looping."), not a cut through its cells
    ("itertools | *Functions creating iterators…")."""
    line_start, line_end = physical_line(text, start)
    if end <= line_end and text[line_start:line_end].lstrip().startswith("|"):
        return description(_row_statement(text[line_start:line_end]))
    # A sentence may begin or end inside a mark's pair ("**Deprecated:** *Encoders…*" is
    # split after "**"): the marks next to it are taken in, so both halves of a pair go.
    while start > 0 and text[start - 1] in _MARKS:
        start -= 1
    while end < len(text) and text[end] in _MARKS:
        end += 1
    return description(plain(text[start:end]))


_MARKS = "*`"


def _row_statement(line: str) -> str:
    cells = [plain(cell) for cell in _CELL_BORDER.split(line.strip().strip("|"))]
    cells = [cell for cell in cells if cell]
    return f"{cells[0]}: {'; '.join(cells[1:])}" if len(cells) > 1 else "".join(cells)


_CELL_BORDER = re.compile(r"(?<!\\)\|")


# --- names -----------------------------------------------------------------------------------


def code_name(raw: str) -> str | None:
    """The API name a code span or signature names ("asyncio.gather(*aws)" →
    "asyncio.gather"), or None when it is no name (an expression, a keyword, a variable)."""
    text = _SIGNATURE_PREFIXES.sub("", plain(raw).strip())
    match = _IDENTIFIER_CALL.match(text)
    if match is None:
        return None
    name, call = match.group(1), match.group(2)
    head = name.split(".")[0]
    if head in _VARIABLE_HEADS or (len(head) == 1 and "." in name):
        return None
    if name.startswith("__") and name.endswith("__"):
        return None  # a bare protocol method ("__init__") is every class's, no one subject
    if rejection(name) is not None or name.casefold() in KEYWORDS:
        return None
    dotted = "." in name
    shaped = "_" in name.strip("_") or any(c.isupper() for c in name[1:]) or name[:1].isupper()
    if dotted or call or shaped:
        return name if CODE_NAME.match(name) else None
    # A bare lowercase word in backticks: a module or command name unless it is English.
    return name if len(name) >= 3 and not is_dictionary_word(name) else None


def topic_name(raw: str) -> tuple[str, str] | None:
    """(name, description) of a heading or title: "asyncio — Asynchronous I/O" names
    "asyncio" and describes it; "3.2. Creating Tasks" names nothing (an action, not a
    topic), nor do "Who Rust Is For" (a clause) and "Traits vs. Generics" (a contrast);
    None when the words are no name."""
    text = _NUMBERING.sub("", plain(raw)).strip().rstrip(":")
    parts = [p.strip() for p in _TITLE_SEPARATORS.split(text) if p.strip()]
    if not parts:
        return None
    name, description = parts[0], " — ".join(parts[1:3])
    manual = _MANUAL_PAGE.match(name)
    if manual is not None:  # "git-add(1) Manual Page" is the page of git-add
        return manual.group(1), description
    code = code_name(name)
    if code is not None:
        return code, description
    words = name.split()
    if not words or len(words) > MAX_HEADING_WORDS or name.endswith("?"):
        return None
    first = words_of(name)[:1]
    if first and first[0].casefold().endswith("ing") and is_dictionary_word(first[0]):
        return None  # "Creating Tasks", "Running an asyncio Program": actions
    if _NOT_ONE_TOPIC.search(name):
        return None  # "Who Rust Is For", "Traits vs. Generics": a clause, a contrast
    if rejection(name) is not None:
        return None
    return name, description


# --- the structural rules --------------------------------------------------------------------


@dataclass(slots=True)
class StructureReader:
    """Reads one window's structure into a Collector."""

    text: str
    structure: Structure
    context: WindowContext
    sentences: Sentences
    out: Collector
    counts: dict[str, int] = field(default_factory=dict)
    # (statement, entity) for every code name met in running text, for co-occurrence.
    statements: list[tuple[tuple[int, int], Found]] = field(default_factory=list)
    # Casefolded names the page is about (its title's, its top headings'): a keyword or a
    # slot name among them is a subject all the same.
    about: frozenset[str] = frozenset()

    def _about(self) -> frozenset[str]:
        titles = [self.context.title, *self.context.headings[:1]]
        titles += [
            self.text[h.title.start : h.title.end] for h in self.structure.headings if h.level == 1
        ]
        names = set()
        for title in titles:
            name = _page_topic(title, self.context.technical)
            if name:
                names.add(name[0].casefold())
        return frozenset(names)

    def unwanted(self, name: str) -> str | None:
        """Why a name is no subject in this window ("placeholder", "keyword"), or None."""
        return not_a_subject(name, self.structure, self.about)

    def count(self, key: str) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1

    def read(self) -> None:
        self.about = self._about()
        subject = self.subject()
        self.headings(subject)
        self.definitions()
        self.tables()
        self.code_spans()
        self.links(subject)

    def subject(self) -> Found | None:
        """The page's subject: its title (or the window's first top-level heading)."""
        title = self.context.title
        if not title:
            top = [h for h in self.structure.headings if h.level == 1]
            title = self.text[top[0].title.start : top[0].title.end] if top else ""
        topic = _page_topic(title, self.context.technical) if title else None
        if topic is None:
            return None
        name, description = topic
        places = _occurrences(self.text, name)
        keyword = name.casefold() in KEYWORDS
        found = self.out.add(
            name,
            CODE_TYPE
            if keyword
            else _type_of(
                name, technical=self.context.technical, written=_NUMBERING.sub("", title)
            ),
            places[0] if places else None,
            description,
        )
        if found is not None:
            for place in places[1:3]:
                self.out.add(name, found.type, place)
            self.count("structure_subjects")
        return found

    def headings(self, subject: Found | None) -> None:
        parents: list[tuple[int, Found]] = []
        for heading in self.structure.headings:
            found = self.heading(heading)
            while parents and parents[-1][0] >= heading.level:
                parents.pop()
            parent = parents[-1][1] if parents else subject
            if found is None:
                continue
            if parent is not None:
                span = (heading.line.start, heading.line.end)
                self.out.relate(found, parent, PART_OF_TYPE, span, self.text)
            parents.append((heading.level, found))

    def heading(self, heading: Heading) -> Found | None:
        raw = self.text[heading.title.start : heading.title.end]
        topic = topic_name(raw)
        if topic is None:
            self.count("structure_headings_skipped")
            return None
        name, description = topic
        place = _find(self.text, name, heading.title.start, heading.title.end)
        if not description:
            description = self._following_statement(heading.line.end)
        self.count("structure_headings")
        # A section heading in capitals ("DESCRIPTION", "SEE ALSO") is no command.
        return self.out.add(name, _type_of(name), place, description)

    def _following_statement(self, position: int) -> str:
        """The first statement after a heading that says something: not a heading, not a
        word or two (bare marks, a fragment the parser cut off), not a version note ("New in
        version 3.3.", which Sphinx puts first)."""
        for start, end in self.sentences.bounds:
            if start < position or self.text[start] == "#":
                continue
            statement = describe(self.text, start, end)
            if len(_WORD.findall(statement)) >= 3 and not _VERSION_NOTE.match(statement):
                return statement
        return ""

    def definitions(self) -> None:
        for entry in self.structure.definitions:
            raw = self.text[entry.term.start : entry.term.end]
            # An API entry's term is code (the parsers put signatures in backticks); a
            # glossary term is words, even a lowercase one ("awaitable").
            code = code_name(raw) if any(c in raw for c in "`.(") else None
            name = code or (topic_name(raw) or (None, ""))[0]
            if name is None:
                self.count("structure_definitions_skipped")
                continue
            reason = self.unwanted(name)
            if reason is not None:
                self.count(f"structure_{reason}s_skipped")
                continue
            term_place = _find(self.text, name, entry.term.start, entry.term.end)
            said = describe(self.text, entry.definition.start, entry.definition.end)
            found = self.out.add(
                name,
                CODE_TYPE if code else FALLBACK_TYPE,
                term_place,
                said,
                defines=says_what_it_is(said),
            )
            if found is None:
                continue
            self.count("structure_definitions")
            if code:
                self.dotted_parents(found, term_place, (entry.term.start, entry.term.end))
            self.defined_with(found, entry.definition)

    def defined_with(self, term: Found, definition: Span) -> None:
        """Code names used in a definition are related to the term it defines."""
        related = 0
        for span in self.structure.code_spans:
            if related >= MAX_RELATED_PER_DEFINITION:
                break
            if definition.start <= span.start < definition.end:
                other = self.code_entity(span)
                if other is not None and other is not term:
                    self.out.relate(
                        term, other, RELATED_TYPE, (definition.start, definition.end), self.text
                    )
                    related += 1

    def code_spans(self) -> None:
        for span in self.structure.code_spans:
            self.code_entity(span)

    def code_entity(self, span: Span) -> Found | None:
        raw = self.text[span.start : span.end]
        name = code_name(raw)
        if name is None and plain(raw).strip().casefold() in self.about:
            name = plain(raw).strip()  # a keyword on the page about it
        if name is None:
            self.count("structure_code_skipped")
            return None
        reason = self.unwanted(name)
        if reason is not None:
            self.count(f"structure_{reason}s_skipped")
            return None
        offset = raw.find(name)
        place = (span.start + offset, span.start + offset + len(name)) if offset >= 0 else None
        statement = self.sentences.at(span.start, self.text)
        found = self.out.add(name, CODE_TYPE, place, describe(self.text, *statement))
        if found is not None:
            self.count("structure_code_names")
            self.statements.append((statement, found))
            self.dotted_parents(found, place, statement)
        return found

    def dotted_parents(
        self, found: Found, place: tuple[int, int] | None, statement: tuple[int, int]
    ) -> None:
        """`a.b.c` is part of `a.b`, which is part of `a` (each parent an entity too)."""
        child = found
        parts = found.name.split(".")
        for depth in range(len(parts) - 1, 0, -1):
            parent_name = ".".join(parts[:depth])
            parent_place = (place[0], place[0] + len(parent_name)) if place else None
            parent = self.out.add(parent_name, CODE_TYPE, parent_place)
            if parent is None:
                return
            self.out.relate(child, parent, PART_OF_TYPE, statement, self.text)
            child = parent

    def links(self, subject: Found | None) -> None:
        if subject is None:
            return
        for text in self.context.links:
            manual = _MANUAL_PAGE.match(text)
            name = (
                manual.group(1)
                if manual
                else code_name(text) or (topic_name(text) or (None, ""))[0]
            )
            if name is None or name.casefold() in _GENERIC_LINK_TEXT:
                self.count("structure_links_skipped")
                continue
            # The page itself, or a slot. A keyword's link is kept: it points to the page
            # about the word, which the page states to be a subject.
            if name.casefold() == subject.name.casefold() or self.unwanted(name) == "placeholder":
                self.count("structure_links_skipped")
                continue
            for start, end in _occurrences(self.text, text)[:3]:
                statement = self.sentences.at(start, self.text)
                place = _find(self.text, name, start, end)
                target = self.out.add(
                    name,
                    _type_of(name, technical=self.context.technical, written=text),
                    place,
                    describe(self.text, *statement),
                )
                if target is not None:
                    self.out.relate(subject, target, REFERENCE_TYPE, statement, self.text)
                    self.count("structure_links")

    def tables(self) -> None:
        for table in self.structure.tables:
            headers = [plain(self.text[c.start : c.end]) for c in table.header]
            for cells, line in zip(table.rows, table.row_lines, strict=True):
                if cells:
                    self.table_row(headers, cells, (line.start, line.end))

    def table_row(self, headers: list[str], cells: tuple[Span, ...], line: tuple[int, int]) -> None:
        raw = self.text[cells[0].start : cells[0].end]
        code = code_name(raw) if "`" in raw else None
        name = code or (topic_name(raw) or (None, ""))[0]
        # A cell of common words ("Yes", "Default value", "thru 1.2") names no row subject.
        words = words_of(name) if name else []
        common = all(is_dictionary_word(w) for w in words) or (
            words[:1] and words[0].islower() and is_dictionary_word(words[0])
        )
        if name is None or (not code and common) or self.unwanted(name) is not None:
            self.count("structure_table_rows_skipped")
            return
        facts = [
            f"{header}: {plain(self.text[cell.start : cell.end])}"
            for header, cell in zip(headers[1:], cells[1:], strict=False)
            if header and self.text[cell.start : cell.end].strip()
        ]
        place = _find(self.text, name, cells[0].start, cells[0].end)
        found = self.out.add(
            name, _type_of(name, technical=self.context.technical), place, "; ".join(facts)
        )
        if found is None:
            return
        self.count("structure_table_rows")
        for span in self.structure.code_spans:
            if cells[0].end <= span.start < line[1]:
                other = self.code_entity(span)
                if other is not None:
                    self.out.relate(found, other, RELATED_TYPE, line, self.text)


# A manual page's name and section, as every man page generator writes it: "git-add(1)",
# "printf(3)", "crontab(5)". Section 7 holds overviews and conventions, the others
# commands, calls, functions, files and formats.
_MANUAL_PAGE = re.compile(r"^([A-Za-z_][\w.+-]*)\((\d)[a-z]*\)(?!\S)")


def _type_of(name: str, *, technical: bool = False, written: str = "") -> str:
    """The type of a title's, heading's, link's or table cell's name, from its shape alone
    (and whether the document is technical, and how it was `written`), so that one name
    gets one type wherever it is met: a command in capitals ("VACUUM", "CREATE TABLE") is
    a technology as its code span is, not a concept on its own page and a technology on
    the others'; a manual page's name is typed by its section."""
    manual = _MANUAL_PAGE.match(plain(written).strip())
    if manual is not None and manual.group(1) == name:
        return FALLBACK_TYPE if manual.group(2) == "7" else CODE_TYPE
    if code_name(name) == name and _looks_like_code(name):
        return CODE_TYPE
    if technical and _COMMAND.match(name):
        return CODE_TYPE
    return DOCUMENT_TYPE if _DOCUMENT_TITLE.search(name) else FALLBACK_TYPE


# Up to four words in capitals, the first of three letters at least (no "A" or "IT").
_COMMAND = re.compile(r"^[A-Z]{3,}[A-Z0-9_]*(?: [A-Z][A-Z0-9_]+){0,3}$")


def _page_topic(title: str, technical: bool) -> tuple[str, str] | None:
    """The name and description a page's title gives its subject; a keyword is a subject
    when a title names it alone ("return", "SELECT — retrieve rows"): that is its page."""
    topic = topic_name(title)
    if topic is not None:
        return topic
    text = _NUMBERING.sub("", plain(title)).strip().rstrip(":")
    parts = [p.strip() for p in _TITLE_SEPARATORS.split(text) if p.strip()]
    if not parts or not (
        parts[0].casefold() in KEYWORDS or (technical and _COMMAND.match(parts[0]))
    ):
        return None
    return parts[0], " — ".join(parts[1:3])


def not_a_subject(name: str, structure: Structure, about: Collection[str] = ()) -> str | None:
    """Why the window's structure says a name is no subject: "placeholder" (a slot of its
    synopses), "keyword" (a word of the language its code is in), or None. Names the page
    is about (`about`, casefolded) always are subjects."""
    folded = name.casefold()
    if folded in about:
        return None
    if folded in structure.placeholders:
        return "placeholder"
    if name in structure.keywords or (" " not in name and folded in KEYWORDS):
        return "keyword"
    # Where the code is written in capitalised keywords, another English word in capitals
    # is one of them too ("use `SELECT` to read it" beside a synopsis of CREATE … IF NOT
    # EXISTS); a capitalised name that is no word ("GTK", "NFS") stays a name.
    if structure.keywords and _UPPER_WORD.match(name) and is_dictionary_word(name):
        return "keyword"
    return None


_UPPER_WORD = re.compile(r"^[A-Z]{2,}$")


# A heading, link or page title that names a document, by the word a manual ends such a
# title with, or its release notes' opening: "Functional Programming HOWTO", "The Python
# Tutorial", "Logging Cookbook", "What's New In Python 3.5" (typed concept before).
DOCUMENT_TYPE = "work"
_DOCUMENT_TITLE = re.compile(
    r"(?:\b(?:HOWTO|Tutorial|Guide|Manual|Handbook|Cookbook|FAQ|Reference|Documentation)$)"
    r"|^What[\u2019']s New\b"
)


def _looks_like_code(name: str) -> bool:
    """A heading's, link's or table cell's name that is an identifier: dotted, snake_case,
    a lone lowercase word, or CamelCase ("IntFlag", "TaskGroup": on the Python manual such
    class names under their own heading were typed concept, and the same name in a code
    span technology)."""
    one_word = " " not in name
    return (
        "." in name
        or "_" in name
        or (one_word and (name.islower() or _CAMEL_HUMP.search(name) is not None))
    )


_CAMEL_HUMP = re.compile(r"[a-z][A-Z]")


def _find(text: str, name: str, start: int, end: int) -> tuple[int, int] | None:
    offset = text.find(name, start, end)
    return (offset, offset + len(name)) if offset >= 0 else None


def _occurrences(text: str, name: str) -> list[tuple[int, int]]:
    """Where a link's text or the page's subject stands in the window, as a whole word: a
    link "str" is not in "string" or "strict", nor "int" in "interpreter" (on the Python
    manual, 5,540 of 102,761 located mentions sat inside a longer word)."""
    if not name:
        return []
    before = r"(?<!\w)" if re.match(r"\w", name) else ""
    after = r"(?!\w)" if re.search(r"\w$", name) else ""
    pattern = re.compile(before + re.escape(name) + after)
    return [m.span() for _, m in zip(range(20), pattern.finditer(text), strict=False)]


MAX_COOCCURRING = 4


def relate_cooccurring(
    out: Collector,
    code: Iterable[tuple[tuple[int, int], Found]],
    prose: Iterable[tuple[tuple[int, int], Found]],
    text: str,
) -> int:
    """Names met in one statement with a code name are related (undirected `related_to`,
    the statement as evidence), at most MAX_COOCCURRING names per statement; returns how
    many pairs. Statements with prose names only are the NER pass's business."""
    by_statement: dict[tuple[int, int], list[Found]] = {}
    for statement, found in code:
        names = by_statement.setdefault(statement, [])
        if found not in names:
            names.append(found)
    for statement, found in prose:
        names = by_statement.get(statement, [])
        if names and found not in names:
            names.append(found)
    pairs = 0
    for statement, names in by_statement.items():
        chosen = names[:MAX_COOCCURRING]
        lists = list_groups(chosen, statement, text)
        for i, first in enumerate(chosen):
            for second in chosen[i + 1 :]:
                if lists[id(first)] == lists[id(second)]:
                    continue  # items of one list: nothing said between them
                before = len(out.relations)
                out.relate(first, second, RELATED_TYPE, statement, text)
                pairs += len(out.relations) - before
    return pairs


# What stands between two items of one list: a comma, "and", "or", a slash, with the code
# marks and call parentheses around the names ("`copy()`, `move()` or `rename()`").
_LIST_GAP = re.compile(r"[\s`*_()]*(?:,|;|/|,?\s*\b(?:and|or)\b|,\s*(?:and|or)\b)[\s`*_()]*")


def list_groups(names: list[Found], statement: tuple[int, int], text: str) -> dict[int, int]:
    """Which list each name of a statement is an item of (by `id`; a name in no list is a
    list of its own): two names next to each other with only a comma, "and", "or" or a
    slash between are items of one list, and so, in a chain, are all the items."""
    group = {id(found): n for n, found in enumerate(names)}
    start, end = statement
    places = sorted(
        ((span, found) for found in names for span in found.spans if start <= span[0] < end),
        key=lambda place: place[0],
    )
    for (left, first), (right, second) in pairwise(places):
        if left[1] <= right[0] and _LIST_GAP.fullmatch(text[left[1] : right[0]]):
            old, new = group[id(second)], group[id(first)]
            group = {key: new if value == old else value for key, value in group.items()}
    return group
