"""Rendering a page that needs JavaScript in headless Chromium, driven through Playwright.

Only pages the plain fetcher already got (and `javascript.javascript_verdict` flagged) are
rendered, and Chromium never opens a connection of its own: every request the page makes
is intercepted (`route`) and either
- answered with the bytes the crawl already fetched (the page itself),
- refused: another origin (scheme, host and port differ from the page's), a URL robots.txt
  disallows, or the page's byte budget spent; or
- fetched by the crawler's own `Fetcher`, so the SSRF guard, the per-host rate limit and
  the response size limit are the plain crawl's, and a redirect to another origin is
  refused before it is requested.
WebSockets and service workers are refused outright, and the browser is pointed at a proxy
that does not exist, so a request Playwright could not intercept fails instead of leaving.

Each page has a time cap (load and scripts) and a byte cap (what its requests loaded plus
the rendered HTML); past either, `RenderError` and the crawl keeps the fetched HTML.

Playwright's synchronous API runs an event loop in the thread that starts it, where Django
refuses database access; the renderer therefore owns one thread of its own, and nothing it
calls back (fetcher, robots, rate limiter) touches the database.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ingest.crawler.fetch import FetchError, FetchResult

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--dns-prefetch-disable",
    "--disable-extensions",
]
# Nothing listens here: a request that escaped interception fails at once.
_NOWHERE_PROXY = "http://127.0.0.1:9"
OTHER_ORIGIN = "other_origin"
# Response headers handed back to Chromium: enough to interpret the body, nothing that
# would make it act (cookies, redirects are already followed, caching).
_KEPT_HEADERS = ("content-type", "content-language")


class RenderUnavailable(Exception):
    """Rendering cannot run here: no Playwright, or no Chromium binary."""


class RenderError(Exception):
    """This page could not be rendered (time or size cap, browser error)."""


@dataclass(frozen=True, slots=True)
class RenderResult:
    html: str
    requests: int  # requests the page made that were fetched for it
    blocked: list[str] = field(default_factory=list)  # URLs refused, with why


# Looked for on PATH, in this order, when no binary is configured. Debian's headless shell
# is the same Blink and V8 without the full browser's window and compositor, which a crawl
# never shows: a rendered page costs a fifth of the CPU (bench/render.py).
DEFAULT_CHROMIUMS = ("chromium-headless-shell", "chromium")


def chromium_executable(configured: str = "") -> str | None:
    """The Chromium binary: `configured` (a path, or a name on PATH), else the first of
    `DEFAULT_CHROMIUMS` on PATH; None when there is none."""
    if not configured:
        return next(filter(None, map(shutil.which, DEFAULT_CHROMIUMS)), None)
    if os.sep in configured:
        ok = os.path.isfile(configured) and os.access(configured, os.X_OK)
        return configured if ok else None
    return shutil.which(configured)


def unavailable_reason(configured: str = "") -> str:
    """Why pages cannot be rendered here, or "" when they can."""
    try:
        import playwright.sync_api  # noqa: F401 (an optional capability)
    except ImportError:
        return "Playwright is not installed on this server, so pages cannot be rendered."
    if chromium_executable(configured) is None:
        where = (
            f"no Chromium at {configured!r} (GRAPHLOOM_CHROMIUM)"
            if configured
            else f"no {' or '.join(f'`{name}`' for name in DEFAULT_CHROMIUMS)} on PATH "
            f"(install Debian's {' or '.join(DEFAULT_CHROMIUMS)}, or set GRAPHLOOM_CHROMIUM)"
        )
        return f"{where}, so pages cannot be rendered."
    return ""


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    try:
        port = parts.port or default
    except ValueError:
        port = None
    return (parts.scheme, (parts.hostname or "").lower(), port)


class Renderer:
    """Renders pages one at a time in its own thread; one browser per crawl run, started
    when the first page needs it. `fetch(url, before_request)` is the crawl's fetcher with
    its rate limit; `allowed(url)` is robots.txt's answer."""

    def __init__(
        self,
        *,
        executable: str,
        fetch: Callable[[str, Callable[[str], object]], FetchResult],
        allowed: Callable[[str], bool],
        timeout: float,
        max_bytes: int,
    ) -> None:
        self.executable = executable
        self.fetch = fetch
        self.allowed = allowed
        self.timeout = timeout
        self.max_bytes = max_bytes
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="render")
        self._playwright: Any = None
        self._browser: Any = None
        self._broken = ""

    def render(self, url: str, content: bytes, content_type: str) -> RenderResult:
        """The page's DOM after its scripts ran, as HTML. RenderError when it cannot be."""
        return self._thread.submit(self._render, url, content, content_type).result()

    def close(self) -> None:
        self._thread.submit(self._stop_quietly).result()
        self._thread.shutdown()

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> Any:
        """The run's browser, started on first use. One that did not start is not tried
        again for every page of the run."""
        if self._broken:
            raise RenderError(self._broken)
        if self._browser is None:
            from playwright.sync_api import Error as PlaywrightError
            from playwright.sync_api import sync_playwright

            self._playwright = sync_playwright().start()
            try:
                self._browser = self._playwright.chromium.launch(
                    executable_path=self.executable,
                    headless=True,
                    args=CHROMIUM_FLAGS,
                    proxy={"server": _NOWHERE_PROXY, "bypass": "<-loopback>"},
                )
            except PlaywrightError as exc:
                self._stop_quietly()
                self._broken = f"Chromium did not start: {_first_line(exc)}"
                raise RenderError(self._broken) from exc
        return self._browser

    def _stop_quietly(self) -> None:
        try:
            self._stop()
        except Exception:
            self._browser = self._playwright = None

    def _stop(self) -> None:
        try:
            if self._browser is not None:
                self._browser.close()
        finally:
            self._browser = None
            if self._playwright is not None:
                self._playwright.stop()
                self._playwright = None

    def _render(self, url: str, content: bytes, content_type: str) -> RenderResult:
        from playwright.sync_api import Error as PlaywrightError

        browser = self._start()
        page_origin = origin(url)
        deadline = time.monotonic() + self.timeout
        state = _PageState(budget=self.max_bytes)
        try:
            context = browser.new_context(
                service_workers="block", accept_downloads=False, java_script_enabled=True
            )
        except PlaywrightError as exc:
            self._stop_quietly()  # a browser that cannot open a context is started afresh
            raise RenderError(f"Chromium failed: {_first_line(exc)}") from exc
        try:
            context.set_default_timeout(self.timeout * 1000)
            context.route_web_socket(re.compile(".*"), lambda ws: ws.close())
            context.route(
                "**/*",
                lambda route: self._answer(route, url, content, content_type, page_origin, state),
            )
            page = context.new_page()
            page.goto(url, wait_until="load", timeout=self.timeout * 1000)
            left = deadline - time.monotonic()
            if left > 0:
                # Scripts still polling past it: the DOM as it is now.
                with contextlib.suppress(PlaywrightError):
                    page.wait_for_load_state("networkidle", timeout=left * 1000)
            html = page.content()
        except PlaywrightError as exc:
            raise RenderError(f"rendering failed: {_first_line(exc)}") from exc
        finally:
            try:
                context.close()
            except PlaywrightError:
                self._stop_quietly()
        size = len(html.encode("utf-8", "replace"))
        if size > state.budget:
            raise RenderError(
                f"the rendered page and its requests exceed {self.max_bytes:,} bytes "
                "(CRAWL_RENDER_MAX_MB)"
            )
        if time.monotonic() > deadline + 1:
            raise RenderError(f"rendering took longer than {self.timeout:g} s")
        return RenderResult(html=html, requests=state.fetched, blocked=state.blocked)

    def _answer(
        self,
        route: Any,
        url: str,
        content: bytes,
        content_type: str,
        page_origin: tuple[str, str, int | None],
        state: _PageState,
    ) -> None:
        """One request of the page: the page itself from the crawl's bytes, the rest
        through the crawler's fetcher, or refused."""
        try:
            self._answer_request(route, url, content, content_type, page_origin, state)
        except Exception as exc:
            state.blocked.append(f"{route.request.url[:300]}: {type(exc).__name__}")
            # Answered already, or the page is gone.
            with contextlib.suppress(Exception):
                route.abort("failed")

    def _answer_request(
        self,
        route: Any,
        url: str,
        content: bytes,
        content_type: str,
        page_origin: tuple[str, str, int | None],
        state: _PageState,
    ) -> None:
        request = route.request
        wanted = request.url.split("#", 1)[0]
        # The first navigation is the page itself (as Chromium spells its URL).
        if not state.served_page and request.is_navigation_request():
            state.served_page = True
            state.budget -= len(content)
            route.fulfill(status=200, headers={"content-type": content_type}, body=content)
            return
        why = self._refusal(wanted, page_origin, state)
        if why:
            state.blocked.append(f"{wanted[:300]}: {why}")
            route.abort("blockedbyclient")
            return

        def same_origin(hop: str) -> None:
            if origin(hop) != page_origin:
                raise FetchError(OTHER_ORIGIN, f"{hop}: another origin", url=hop)

        try:
            result = self.fetch(wanted, same_origin)
        except FetchError as exc:
            state.blocked.append(f"{wanted[:300]}: {exc.reason}")
            route.abort("blockedbyclient" if exc.reason == OTHER_ORIGIN else "failed")
            return
        state.fetched += 1
        state.budget -= len(result.content)
        if state.budget < 0:
            state.blocked.append(f"{wanted[:300]}: byte budget spent")
            route.abort("blockedbyclient")
            return
        headers = {k: v for k, v in result.headers.items() if k in _KEPT_HEADERS}
        route.fulfill(status=result.status, headers=headers, body=result.content)

    def _refusal(
        self, url: str, page_origin: tuple[str, str, int | None], state: _PageState
    ) -> str:
        if origin(url) != page_origin:
            return "another origin"
        if state.budget <= 0:
            return "byte budget spent"
        if not self.allowed(url):
            return "disallowed by robots.txt"
        return ""


@dataclass
class _PageState:
    budget: int
    served_page: bool = False
    fetched: int = 0
    blocked: list[str] = field(default_factory=list)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
