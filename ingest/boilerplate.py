"""Boilerplate: text a source repeats across its documents (menus, breadcrumbs, footers,
cookie banners, "previous topic / next topic", copyright lines, template notices).

Pure functions, no database: the ingest actions (ingest/actions/boilerplate.py) keep, per
source, which documents hold which fingerprint, and ask this module two questions: what are
this text's fingerprints, and given which fingerprints repeat, which spans of it are
boilerplate.

Why lines, not paragraphs: a paragraph repeated verbatim is a run of repeated lines, so
lines find everything paragraphs find; but pages whose main content the HTML parser cannot
isolate come out as their visible text, one line per menu entry with no blank line between
menu and article, and there a paragraph is the whole page. Lines are fingerprinted after
normalising (case folded, whitespace collapsed, every digit a 0: "Last updated on Nov 24,
2026" and "3.11.2 Documentation" match across pages and versions).

A line is *repeated* when its fingerprint occurs in at least BOILERPLATE_MIN_DOCUMENTS
documents of the source. Boilerplate is a *run* of consecutive repeated lines (blank lines,
and lines of punctuation only such as "|" or "»", do not break it) that
- weighs at least `min_chars` letters and digits in its repeated lines other than headings:
  a lone "Note", "See also", "New in version 3.9." or "## Examples" repeats across any
  documentation site but is the document's own structure, and making it a chunk of its own
  would only cut the content around it into smaller chunks;
- covers whole paragraphs (it starts where a paragraph starts and ends where one ends), or
  has at least three repeated lines (menus inside a page-long paragraph): one repeated line
  inside a paragraph of its own ("Changed in version 3.10: Added the key parameter.") is
  that paragraph's content;
- is no code: a snippet repeated across pages (a tutorial building on one example) is
  content, so lines in ``` blocks never repeat;
- may bridge one short line that does not repeat between two that do, if it reads like a
  title (it does not end like a sentence): the neighbouring pages' titles in "Previous
  topic / <title> / Next topic / <title>", the page's own title inside a breadcrumb.

Long repeated text (a licence, a notice on every page) is boilerplate too: the same
paragraph on every page says nothing about any one of them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Container, Sequence
from dataclasses import dataclass

_LINE = re.compile(r"[^\n]+")
_SPACE = re.compile(r"\s+")
_DIGITS = re.compile(r"(?<!\d)\d{1,4}(?!\d)")
_WORD_CHARS = re.compile(r"\w")
_HEADING = re.compile(r"#{1,6}\s")
_LIST_ITEM = re.compile(r"(?:[-*+•]|\d{1,3}[.)])\s")
# A line ending like a sentence is prose, never a title to bridge.
_SENTENCE_END = re.compile(r"[.!?:;,。]['\")\]]*\Z")

# The defaults of the settings of the same names (config/settings/base.py).
MIN_DOCUMENTS = 3
MIN_CHARS = 25
# The longest line that does not repeat a run may bridge (a page title, a topic's name).
BRIDGE_CHARS = 80
# A run this many repeated lines long is boilerplate even inside a paragraph.
MIN_LINES_IN_PARAGRAPH = 3


@dataclass(frozen=True, slots=True)
class Line:
    """A non-blank line of a text, trimmed: `text[start:end]`."""

    position: int  # among the text's non-blank lines
    start: int
    end: int
    fingerprint: str
    # Letters and digits of the normalised line: 0 for "|", "»" (never fingerprinted: outside
    # code they neither make nor break a run).
    weight: int
    heading: bool
    # Inside (or opening, or closing) a ``` code block: never boilerplate.
    code: bool
    # Ends like a sentence: prose, never a title (of a neighbouring page) to bridge.
    sentence: bool
    # First / last line of its paragraph. Paragraphs end at blank lines; a heading is a
    # paragraph of its own, a list item one that ends where the next item starts.
    opens: bool
    closes: bool


def normalise(text: str) -> str:
    """Case folded, whitespace collapsed, every number of up to four digits a 0 (dates,
    years, versions; five digits and more, such as issue numbers, stay as they are)."""
    return _DIGITS.sub("0", _SPACE.sub(" ", text.casefold()).strip())


def fingerprint(text: str) -> str:
    return hashlib.sha256(normalise(text).encode("utf-8", "surrogatepass")).hexdigest()


def lines(text: str) -> list[Line]:
    """The non-blank lines of `text`, in order, with their fingerprints and paragraphs."""
    raw: list[tuple[int, int, bool]] = []  # start, end, follows a blank line (or the start)
    blank_before = True
    for match in _LINE.finditer(text):
        start, end = match.start(), match.end()
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start == end:
            blank_before = True
            continue
        if raw and text.count("\n", raw[-1][1], start) > 1:
            blank_before = True
        raw.append((start, end, blank_before))
        blank_before = False
    kinds = [_kind(text, start) for start, _, _ in raw]
    code: list[bool] = []
    fenced = False
    for start, end, _ in raw:
        fences = text.count("```", start, end)
        code.append(fenced or bool(fences))
        fenced = fenced != bool(fences % 2)
    result: list[Line] = []
    for position, (start, end, after_blank) in enumerate(raw):
        last = position == len(raw) - 1
        normalised = normalise(text[start:end])
        result.append(
            Line(
                position=position,
                start=start,
                end=end,
                fingerprint=hashlib.sha256(normalised.encode("utf-8", "surrogatepass")).hexdigest(),
                weight=len(_WORD_CHARS.findall(normalised)),
                heading=kinds[position] == "heading",
                code=code[position],
                sentence=bool(_SENTENCE_END.search(text, start, end)),
                opens=after_blank or bool(kinds[position]) or kinds[position - 1] == "heading",
                closes=last
                or raw[position + 1][2]
                or kinds[position] == "heading"
                or bool(kinds[position + 1]),
            )
        )
    return result


def _kind(text: str, start: int) -> str:
    if _HEADING.match(text, start):
        return "heading"
    return "item" if _LIST_ITEM.match(text, start) else ""


def fingerprints(text_lines: Sequence[Line]) -> set[str]:
    """The distinct fingerprints a document contributes to its source's counts."""
    return {line.fingerprint for line in text_lines if line.weight and not line.code}


def boilerplate_spans(
    text_lines: Sequence[Line],
    repeated: Container[str],
    *,
    min_chars: int = MIN_CHARS,
    bridge_chars: int = BRIDGE_CHARS,
) -> list[tuple[int, int]]:
    """The (start, end) character ranges of the text that are boilerplate, in order, given
    the fingerprints that repeat across the source (see the module docstring)."""
    meaningful = [line for line in text_lines if not _neutral(line)]
    hits = [not line.code and line.fingerprint in repeated for line in meaningful]
    bridged = [
        0 < index < len(meaningful) - 1
        and not hits[index]
        and hits[index - 1]
        and hits[index + 1]
        and not line.heading
        and not line.code
        and line.end - line.start <= bridge_chars
        and not line.sentence
        for index, line in enumerate(meaningful)
    ]
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(meaningful):
        if not hits[index]:
            index += 1
            continue
        first = index
        while index + 1 < len(meaningful) and (hits[index + 1] or bridged[index + 1]):
            index += 1
        last = index
        index += 1
        # A heading introduces what follows it: one ending a run belongs to the content
        # (and so does a line bridged to it).
        while last > first and (meaningful[last].heading or not hits[last]):
            last -= 1
        run = meaningful[first : last + 1]
        repeated_lines = [
            line for line, hit in zip(run, hits[first : last + 1], strict=True) if hit
        ]
        weight = sum(line.weight for line in repeated_lines if not line.heading)
        whole = _opens(text_lines, run[0]) and _closes(text_lines, run[-1])
        if weight >= min_chars and (whole or len(repeated_lines) >= MIN_LINES_IN_PARAGRAPH):
            spans.append((run[0].position, run[-1].position))
    return _with_punctuation(text_lines, spans)


def _neutral(line: Line) -> bool:
    """Punctuation only ("|", "»"), outside code: neither makes nor breaks a run."""
    return not line.weight and not line.code


def _opens(text_lines: Sequence[Line], line: Line) -> bool:
    """The line opens its paragraph, lines of punctuation only before it aside."""
    position = line.position
    while position > 0 and not text_lines[position].opens and _neutral(text_lines[position - 1]):
        position -= 1
    return text_lines[position].opens


def _closes(text_lines: Sequence[Line], line: Line) -> bool:
    position, last = line.position, len(text_lines) - 1
    while (
        position < last and not text_lines[position].closes and _neutral(text_lines[position + 1])
    ):
        position += 1
    return text_lines[position].closes


def _with_punctuation(
    text_lines: Sequence[Line], runs: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Character spans of runs (first and last line positions), widened over the lines of
    punctuation only that touch them ("«" above a menu, "|" after it) and merged when
    nothing else separates them."""
    spans: list[tuple[int, int]] = []
    previous_last = -2
    for first, last in runs:
        while first > 0 and _neutral(text_lines[first - 1]):
            first -= 1
        while last + 1 < len(text_lines) and _neutral(text_lines[last + 1]):
            last += 1
        if spans and first <= previous_last + 1:
            spans[-1] = (spans[-1][0], text_lines[last].end)
        else:
            spans.append((text_lines[first].start, text_lines[last].end))
        previous_last = last
    return spans
