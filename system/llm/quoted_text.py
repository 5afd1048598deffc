"""Text quoted from documents or from an LLM's reply, cleaned before it is shown again: in
a prompt (knowledge/answering/prompt.py, knowledge/retrieval/context.py), a query
(knowledge/retrieval/search.py) or a terminal (the `ask` and `search` commands).

Such text is hostile: a NUL, an escape sequence, a zero-width or bidi override can hide
words from a reader, forge structure, or drive a terminal. One cleaner for all of them; the
callers differ only in which line breaks they keep and which categories they drop, so
those are arguments and each caller's behaviour stays what it was.
"""

from __future__ import annotations

import unicodedata

# Control, format, surrogate, private-use and unassigned characters.
INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})
# Control and format characters only (what a terminal must not receive).
CONTROL_AND_FORMAT = frozenset({"Cc", "Cf"})
_BREAKS = "\t\n\r\v\f"
_SEPARATORS = ("Zl", "Zp")  # the line and paragraph separators


def strip_invisible(
    text: str, *, keep: str = "", to_space: bool = False, drop: frozenset[str] = INVISIBLE
) -> str:
    """`text` without the characters of the categories in `drop`, except those in `keep`
    (say "\\n\\t" where line breaks matter); with `to_space`, every line break and tab
    (and the line and paragraph separators) becomes a space instead, for text quoted on
    one line. `drop` holds categories of characters that are never printable (as both
    sets here do): printable text is returned as it is without a look at each character."""
    if text.isprintable():  # the common case, checked in C: nothing here would change
        return text
    out = []
    for char in text:
        if char in keep:
            out.append(char)
            continue
        category = unicodedata.category(char)
        if to_space and (char in _BREAKS or category in _SEPARATORS):
            out.append(" ")
        elif category not in drop:
            out.append(char)
    return "".join(out)
