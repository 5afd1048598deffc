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

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HEADLESS_SHELL = "chromium-headless-shell"


def chromium_path(*, headless_shell: bool = False) -> str | None:
    """GRAPHLOOM_CHROMIUM; else, when `headless_shell`, `chromium-headless-shell` on PATH;
    else `chromium` on PATH; else None."""
    configured = os.environ.get("GRAPHLOOM_CHROMIUM")
    if configured:
        return configured
    return (headless_shell and shutil.which(HEADLESS_SHELL)) or shutil.which("chromium")
