"""A passage's text as a person reads it: prose without the Markdown marks the parsers
write into a document's text (ingest/parsers), code blocks line for line without their
fences. One reading for the Ask page's server-rendered passages (explorer/ask_views.py) and
for the passages an answer streams (the API's `blocks`), which the page adds when the answer
cites a passage it does not list: the two cannot look different. Nothing here builds HTML;
the template and the script set each block as text."""

from __future__ import annotations

import re

# Fences around code blocks, heading marks, bold and emphasis, inline code, definition
# marks.
_FENCE = re.compile(r"[ \t]*```")
_HEADING_MARK = re.compile(r"[ \t]*#{1,6}[ \t]+")
_DEFINITION_MARK = re.compile(r":[ \t]+")
_STRONG = re.compile(r"\*\*(?=\S)([^*\n]+?)(?<=\S)\*\*")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_BLANK_LINES = re.compile(r"\n{3,}")


def passage_blocks(text: str, *, in_code: bool = False) -> list[tuple[bool, str]]:
    """A chunk's text as a passage reads, in blocks of (is code, text): prose without the
    Markdown marks (a passage is shown as text, where "## json" and "**PEP 443**" are
    noise), and code blocks line for line without their fences (a "# comment" is code
    there). `in_code`: the text starts inside a code block (the chunk before holds its
    fence; ingest.selectors.chunks_opening_in_code)."""
    blocks: list[tuple[bool, list[str]]] = [(in_code, [])]
    for line in text.split("\n"):
        if _FENCE.match(line):
            blocks.append((not blocks[-1][0], []))
            continue
        code, lines = blocks[-1]
        lines.append(line if code else _prose(line))
    joined = (
        (code, _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip("\n")) for code, lines in blocks
    )
    return [(code, body) for code, body in joined if body.strip()]


def readable(blocks: list[tuple[bool, str]]) -> str:
    """A passage's blocks as one text (where there is no room to set code apart)."""
    return "\n".join(body for _, body in blocks).strip()


def _prose(line: str) -> str:
    for mark in (_HEADING_MARK, _DEFINITION_MARK):
        if found := mark.match(line):
            line = line[found.end() :]
    return _INLINE_CODE.sub(r"\1", _EMPHASIS.sub(r"\1", _STRONG.sub(r"\1", line)))
