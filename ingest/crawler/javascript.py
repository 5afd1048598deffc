"""Does a fetched HTML page need a browser to show its text? One cheap decision, no database.

Sites built with client-side JavaScript answer a plain GET with a shell: a mount point
(`<div id="root"></div>`), script bundles and perhaps a `<noscript>` asking to enable
JavaScript. Stored as is, such a page is a near-empty document and nobody notices. The crawl
loop asks `javascript_verdict` about every HTML page it stores: the verdict is kept on the
document (`needs_javascript`) and counted on the source, and a crawl with `render` loads
flagged pages in headless Chromium (ingest/crawler/render.py).

A page is flagged when
- it is large (at least `min_page_bytes`) while its visible text is tiny (under
  `max_text_chars`): the bytes are scripts, styles and markup, not content; or
- it is a known single-page-app shell: an empty mount point (`id` root, app, __next,
  __nuxt, ...) or a `<noscript>` asking for JavaScript, with at least one script and tiny
  visible text.
A short page that is short because it has little to say (no scripts, or real text) is not.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from html.parser import HTMLParser

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})

# The mount points single-page-app frameworks render into (React, Vue, Next.js, Nuxt,
# Gatsby, Angular's usual roots, Svelte's).
MOUNT_IDS = frozenset({"root", "app", "__next", "__nuxt", "___gatsby", "app-root", "svelte"})
_ENABLE_JS = re.compile(
    r"(enable|turn on|activate|allow)\s+javascript|javascript\s+(is\s+)?(required|"
    r"needed|disabled)|(requires|needs)\s+javascript",
    re.IGNORECASE,
)
# Elements whose text no reader sees on the page.
_HIDDEN = frozenset({"script", "style", "noscript", "template", "head", "title", "svg"})
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
     "track", "wbr"}
)  # fmt: skip
# Only the start of a huge page is read: a shell says what it is early, and a page with that
# much markup before any text is flagged by its size anyway.
_READ_CHARS = 2_000_000


@dataclass(frozen=True, slots=True)
class JavaScriptVerdict:
    needs_javascript: bool
    reason: str  # for people: why it was flagged, "" when it was not
    text_chars: int
    page_bytes: int


def is_html(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() in HTML_TYPES


def javascript_verdict(
    content: bytes | str, *, min_page_bytes: int, max_text_chars: int
) -> JavaScriptVerdict:
    """Whether the HTML `content` seems to need JavaScript to show its text, and why."""
    raw = content.encode("utf-8", "replace") if isinstance(content, str) else content
    text = raw[:_READ_CHARS].decode("utf-8", "replace")
    scan = _ShellScan()
    # html.parser on hostile markup: whatever it raises, judge what was read.
    with contextlib.suppress(Exception):
        scan.feed(text)
        scan.close()
    chars = scan.text_chars
    tiny = chars < max_text_chars

    def verdict(reason: str) -> JavaScriptVerdict:
        return JavaScriptVerdict(bool(reason), reason, chars, len(raw))

    if not tiny:
        return verdict("")
    if scan.scripts and scan.empty_mounts:
        return verdict(
            f"single-page-app shell: empty #{scan.empty_mounts[0]} with "
            f"{scan.scripts} script(s), {chars} characters of text"
        )
    if scan.scripts and scan.noscript_asks:
        return verdict(f"asks to enable JavaScript, {chars} characters of text")
    if len(raw) >= min_page_bytes:
        return verdict(f"{len(raw):,} bytes of page but only {chars} characters of text")
    return verdict("")


class _ShellScan(HTMLParser):
    """Counts visible text, scripts, empty mount points and JavaScript-asking noscripts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text_chars = 0
        self.scripts = 0
        self.empty_mounts: list[str] = []
        self.noscript_asks = False
        self._hidden = 0
        self._noscript = 0
        self._noscript_text: list[str] = []
        # Open mount points: [id, depth of the stack when opened, still empty].
        self._mounts: list[list[object]] = []
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _HIDDEN:  # a script inside a mount point does not fill it
            for mount in self._mounts:
                mount[2] = False
        if tag == "script":
            self.scripts += 1
        if tag == "noscript":
            self._noscript += 1
        if tag in _HIDDEN:
            self._hidden += 1
        if tag in _VOID:
            return
        self._depth += 1
        element_id = next((v for k, v in attrs if k == "id" and v), None)
        if element_id and element_id.strip().lower() in MOUNT_IDS:
            self._mounts.append([element_id.strip(), self._depth, True])

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts += 1
        elif tag not in _HIDDEN:
            for mount in self._mounts:
                mount[2] = False

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        if tag in _HIDDEN and self._hidden:
            self._hidden -= 1
        if tag == "noscript" and self._noscript:
            self._noscript -= 1
            if _ENABLE_JS.search(" ".join(self._noscript_text)):
                self.noscript_asks = True
            self._noscript_text = []
        while self._mounts and self._mounts[-1][1] == self._depth:
            name, _, empty = self._mounts.pop()
            if empty:
                self.empty_mounts.append(str(name))
        self._depth = max(0, self._depth - 1)

    def handle_data(self, data: str) -> None:
        if self._noscript:
            self._noscript_text.append(data[:1000])
            # A parser may give <noscript>'s content as text: read it for markup too.
            if "<" in data:
                self.noscript_asks = self.noscript_asks or bool(_ENABLE_JS.search(data))
            return
        if self._hidden:
            return
        words = " ".join(data.split())
        if words:
            for mount in self._mounts:
                mount[2] = False
            self.text_chars += len(words)

    def close(self) -> None:
        super().close()
        # Mount points the page never closed are judged as they were left.
        for name, _, empty in self._mounts:
            if empty:
                self.empty_mounts.append(str(name))
        self._mounts = []
