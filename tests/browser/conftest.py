"""Browser tests: Debian's Chromium driven by Playwright against a real live server (the
test database, real static files, the real CSP), with a real worker process when a test
needs ingestion to run.

Every page a test opens is watched: an uncaught script error or a Content-Security-Policy
violation fails the test, so a screen that "works" while its scripts are broken or blocked
cannot pass. Screenshots of the main screens go to test-results/screenshots/ for review.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, sync_playwright

from system.selectors import get_worker_status
from tests.browser.chromium import CHROMIUM_FLAGS, chromium_path
from tests.conftest import Member
from tests.fork_server import ForkedProcess
from tests.support import start_worker, stop_process, wait_for

ASYNC_UNSAFE = "DJANGO_ALLOW_ASYNC_UNSAFE"
SCREENSHOTS = Path(settings.BASE_DIR) / "test-results" / "screenshots"

pytestmark = pytest.mark.slow


def chromium_executable() -> str:
    path = chromium_path(headless_shell=True)
    if not path:
        pytest.fail(
            "chromium is not installed: `make test` installs it (scripts/system-deps.sh); "
            "or point GRAPHLOOM_CHROMIUM at a Chromium binary."
        )
    return path


@pytest.fixture(scope="package", autouse=True)
def async_unsafe_allowed() -> Iterator[None]:
    """Playwright's sync API runs an event loop in this thread; Django refuses ORM calls
    from a thread with a running loop unless told the caller knows what it does (it does:
    the loop only drives the browser). Only while these tests run: anything started later
    (a deploy check in a subprocess) must not inherit it."""
    previous = os.environ.get(ASYNC_UNSAFE)
    os.environ[ASYNC_UNSAFE] = "true"
    yield
    if previous is None:
        os.environ.pop(ASYNC_UNSAFE, None)
    else:
        os.environ[ASYNC_UNSAFE] = previous


@pytest.fixture(scope="package")
def browser(async_unsafe_allowed: None) -> Iterator[Browser]:
    if not (Path(settings.BASE_DIR) / "static" / "vendor" / "d3.js").exists():
        subprocess.run(["npm", "run", "--silent", "build"], cwd=settings.BASE_DIR, check=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_executable(), headless=True, args=CHROMIUM_FLAGS
        )
        yield browser
        browser.close()


class PageProblems:
    """Script errors and CSP violations seen on a page (see the module docstring)."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def console(self, message: ConsoleMessage) -> None:
        text = message.text
        if message.type == "error" and ("Content Security Policy" in text or "Refused to" in text):
            self.items.append(f"CSP: {text}")

    def error(self, error: Exception) -> None:
        self.items.append(f"script error: {error}")


@pytest.fixture
def context(browser: Browser, live_server) -> Iterator[BrowserContext]:
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": 1280, "height": 860}, accept_downloads=True
    )
    context.set_default_timeout(15_000)
    yield context
    context.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    page = context.new_page()
    problems = PageProblems()
    page.on("console", problems.console)
    page.on("pageerror", problems.error)
    page.problems = problems  # type: ignore[attr-defined]
    yield page
    assert not problems.items, "the page had problems:\n" + "\n".join(problems.items)


@pytest.fixture
def sign_in(context: BrowserContext, live_server) -> Callable[[Member], None]:
    """Sign `member` in for the browser context (a real session, made by Django's test
    client and handed to the browser as its cookie); the sign-in form has its own test."""

    def sign(member: Member) -> None:
        client = Client()
        client.force_login(member.user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME]
        context.clear_cookies()
        context.add_cookies(
            [{"name": settings.SESSION_COOKIE_NAME, "value": cookie.value, "url": live_server.url}]
        )

    return sign


@pytest.fixture
def worker(transactional_db, tmp_path, settings) -> Iterator[ForkedProcess]:
    """A real task worker on the test database, sharing the live server's media root; yielded
    once it has beaten (a loaded machine can take seconds to start it, and pages that show
    the worker's state would otherwise race its start)."""
    process = start_worker("browser", GRAPHLOOM_MEDIA_ROOT=str(settings.MEDIA_ROOT))
    wait_for(
        lambda: process.poll() is None and get_worker_status().status == "ok",
        timeout=120,
        what="the browser tests' worker to start and beat",
    )
    yield process
    stop_process(process)


@pytest.fixture(autouse=True)
def browser_media_root(tmp_path, settings) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")


def screenshot(page: Page, name: str) -> Path:
    """Save a full-page screenshot for review under test-results/screenshots/."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{re.sub(r'[^a-z0-9_-]+', '-', name.lower())}.png"
    # caret="initial": the default hides the caret with an inline style attribute on the
    # focused input, which htmx would copy into its next swap (a CSP violation).
    page.screenshot(path=str(path), full_page=True, caret="initial")
    return path
