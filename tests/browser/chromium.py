"""Which Chromium the browser tests and bench/explorer.py drive, and how: Debian's package
(Playwright's own download needs network this machine may not have), with the flags a
headless run in a container needs."""

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


def chromium_path() -> str | None:
    """GRAPHLOOM_CHROMIUM, else `chromium` on PATH, else None."""
    return os.environ.get("GRAPHLOOM_CHROMIUM") or shutil.which("chromium")
