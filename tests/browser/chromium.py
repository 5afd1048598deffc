"""Which Chromium the browser tests and bench/explorer.py drive, and how: Debian's packages
(Playwright's own download needs network this machine may not have), with the flags a
headless run in a container needs.

The tests prefer Debian's `chromium-headless-shell` when it is installed: the same Blink and
V8 as `chromium`, without the full browser's window and compositor behind the page, which is
what Playwright itself launches for a headless run. The browser tests spend about a third
less CPU on it (docs/BENCHMARKS.md, "The suite's time, fifth pass"). The explorer benchmark
measures what a person's browser does, so it keeps the full `chromium`.
"""

from __future__ import annotations

import os
import shutil

from ingest.crawler.render import chromium_executable

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path(*, headless_shell: bool = False) -> str | None:
    """GRAPHLOOM_CHROMIUM; else, when `headless_shell`, the binary a crawl renders with
    (ingest/crawler/render.py: `chromium-headless-shell` on PATH, else `chromium`); else
    `chromium` on PATH; None when there is none."""
    configured = os.environ.get("GRAPHLOOM_CHROMIUM", "")
    if headless_shell:
        return chromium_executable(configured)
    return configured or shutil.which("chromium")
