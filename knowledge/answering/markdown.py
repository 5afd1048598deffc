"""The LLM's answer as HTML a browser may show: its Markdown rendered without raw HTML,
links only to http, https and mailto, no images, headings demoted under the page's own,
then cleaned again by a strict allow-list, so a renderer's gap cannot reach the page.

A citation marker `[n]` becomes a link to passage n only when n is a validated citation of
the answer (citations.py checked it against the passages); any other number stays plain
text. Markers are found in the text tokens of the parsed Markdown, so "[1]" inside code,
or inside a link's label, stays literal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markdown_it.token import Token

from knowledge.answering.citations import MARKER

LINK_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer nofollow"
# The page's title is h1 and its sections h2: an answer's headings start at h3.
TOP_HEADING = 3
TAGS = frozenset(
    {"p", "br", "em", "strong", "code", "pre", "ul", "ol", "li", "blockquote"}
    | {f"h{level}" for level in range(TOP_HEADING, 7)}
    | {"a"}
)
ATTRIBUTES = {"a": {"href", "data-n"}, "ol": {"start"}}
CLASSES = {"a": {"cite"}}
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*):", re.I)


def _link_allowed(url: str) -> bool:
    """Only absolute http(s) and mailto links: no javascript:, data:, relative paths."""
    found = _SCHEME.match(url.strip())
    return found is not None and found.group(1).lower() in LINK_SCHEMES


def _render_citation(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    n = int(tokens[idx].meta["n"])
    return f'<a class="cite" href="#passage-{n}" data-n="{n}">[{n}]</a>'


def _render_heading_open(
    self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    return f"<{_demoted(tokens[idx].tag)}>"


def _render_heading_close(
    self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    return f"</{_demoted(tokens[idx].tag)}>\n"


def _demoted(tag: str) -> str:
    return f"h{min(6, int(tag[1:]) + TOP_HEADING - 1)}"


def _renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).disable("image")
    md.validateLink = _link_allowed  # type: ignore[method-assign]
    md.add_render_rule("citation", _render_citation)
    md.add_render_rule("heading_open", _render_heading_open)
    md.add_render_rule("heading_close", _render_heading_close)
    return md


_MD = _renderer()


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _citation(n: int) -> Token:
    token = Token("citation", "a", 0)
    token.meta = {"n": n}
    return token


def _split(content: str, valid: set[int]) -> list[Token]:
    """A text token's content cut at its markers; valid numbers become citation tokens."""
    out: list[Token] = []
    last = 0
    for match in MARKER.finditer(content):
        numbers = [int(part) for part in match.group(2).split(",")]
        if not any(n in valid for n in numbers):
            continue
        out.append(_text(content[last : match.start()] + match.group(1)))
        for n in numbers:
            out.append(_citation(n) if n in valid else _text(f"[{n}]"))
        last = match.end()
    out.append(_text(content[last:]))
    return [token for token in out if token.type != "text" or token.content]


def _link_citations(tokens: list[Token], valid: set[int]) -> None:
    for token in tokens:
        if token.type != "inline" or not token.children:
            continue
        children: list[Token] = []
        depth = 0  # inside a link's label, markers stay text
        for child in token.children:
            if child.type == "link_open":
                depth += 1
            elif child.type == "link_close":
                depth -= 1
            if child.type == "text" and depth == 0 and valid:
                children.extend(_split(child.content, valid))
            else:
                children.append(child)
        token.children = children


def _cleaned(html: str) -> str:
    return nh3.clean(
        html,
        tags=set(TAGS),
        clean_content_tags={"script", "style"},
        attributes={tag: set(names) for tag, names in ATTRIBUTES.items()},
        allowed_classes={tag: set(names) for tag, names in CLASSES.items()},
        url_schemes=set(LINK_SCHEMES),
        link_rel=LINK_REL,
        strip_comments=True,
    )


def render_answer(text: str, citations_n: set[int]) -> str:
    """`text` (the LLM's Markdown) as allow-listed HTML; each `[n]` with n in
    `citations_n` a link to `#passage-n`, every other bracketed number plain text."""
    tokens = _MD.parse(text)
    _link_citations(tokens, {int(n) for n in citations_n})
    return _cleaned(_MD.renderer.render(tokens, _MD.options, {})).strip()
