"""Helpers for tests that start real processes (worker, web server, manage.py), and for
running the ingestion pipeline inline."""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test import Client

from ingest.actions.pipeline import do_process_documents
from ingest.crawler.render import unavailable_reason
from ingest.dispatch import document_groups
from ingest.models import PENDING, Document, Source
from tests.fork_server import ForkedProcess, ForkServer

T = TypeVar("T")
MANAGE_PY = str(Path(settings.BASE_DIR) / "manage.py")

# Tests that render pages skip where the server could not: the product's own check of the
# Chromium its settings name (CRAWL_CHROMIUM), with the reason the API would give.
NO_CHROMIUM = unavailable_reason(settings.CRAWL_CHROMIUM)
needs_chromium = pytest.mark.skipif(
    bool(NO_CHROMIUM), reason=f"rendering needs Chromium: {NO_CHROMIUM}"
)


def subprocess_env(**extra: str) -> dict[str, str]:
    """Environment for a child process that must use this test run's database."""
    # A developer's own LLM or extraction settings never reach a test's child process.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "LLM_", "EXTRACTION_"))
        and k != "DJANGO_ALLOW_ASYNC_UNSAFE"  # set in-process for the browser tests only
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.test",
        GRAPHLOOM_DB_NAME=connection.settings_dict["NAME"],
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def start_manage(
    *args: str, env: dict[str, str] | None = None, **popen: object
) -> subprocess.Popen:
    return subprocess.Popen(  # type: ignore[call-overload]
        [sys.executable, MANAGE_PY, *args],
        env=env or subprocess_env(),
        cwd=settings.BASE_DIR,
        **popen,
    )


_fork_server: ForkServer | None = None


def fork_server() -> ForkServer:
    """This test process's fork server (tests/fork_server.py), started on first use."""
    global _fork_server
    if _fork_server is None or not _fork_server.alive():
        _fork_server = ForkServer(env=subprocess_env(), cwd=str(settings.BASE_DIR))
        atexit.register(_fork_server.close)
    return _fork_server


def start_worker(name: str, **env: str) -> ForkedProcess:
    """A real task worker on this test run's database, beating fast and declared dead 2 s
    after its last beat (so tests that kill one see its tasks re-queued quickly).

    It runs `manage.py worker` in a fork of a process that has already imported PyTorch,
    sentence-transformers and spaCy (tests/fork_server.py), not from a bare interpreter."""
    environment = subprocess_env(
        GRAPHLOOM_WORKER_HEARTBEAT_SECONDS="0.2", GRAPHLOOM_WORKER_STALE_AFTER_SECONDS="2", **env
    )
    argv = [MANAGE_PY, "worker", "--no-reload", "--interval", "0.1", "--no-startup-delay",
            "--worker-id", name]  # fmt: skip
    return fork_server().start(argv, env=environment, cwd=str(settings.BASE_DIR))


def stop_process(process: subprocess.Popen | ForkedProcess, *, timeout: float = 10) -> None:
    """SIGTERM (a worker finishes its step and exits), then SIGKILL if it does not."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_for[T](
    probe: Callable[[], T | None], *, timeout: float = 60.0, what: str = "condition"
) -> T:
    """Poll `probe` until it returns something truthy; fail with `what` after `timeout`.

    The timeout only bounds a hung test; nothing asserts on how long it took.
    """
    deadline = time.monotonic() + timeout
    while True:
        result = probe()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fetch(
    url: str, *, headers: dict[str, str] | None = None, timeout: float = 5
) -> tuple[int, str, str]:
    """(status, final URL after redirects, body) of a GET; status 0 when nothing answers."""
    try:
        request = urllib.request.Request(url, headers=headers or {})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.url, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.url, error.read().decode()
    except OSError:
        return 0, "", ""


@contextmanager
def module_rows(django_db_blocker: Any) -> Iterator[None]:
    """For a module-scoped fixture: rows written once for a test module, in a transaction
    rolled back when the module ends. Each test runs inside it in a savepoint of its own
    (pytest-django's `db`), so what one test writes the next never sees; rows many tests
    only read are then not written again for every test."""
    with django_db_blocker.unblock(), transaction.atomic():
        yield
        transaction.set_rollback(True)


def run_pending(source: Source) -> list[str]:
    """Process the source's pending documents in this process, in the groups a worker gets,
    then those sent round again meanwhile (documents chunked before text they share with
    later ones was known to repeat: ingest/actions/boilerplate.py), as a worker would."""
    statuses: list[str] = []
    for _ in range(3):
        groups = document_groups(
            Document.objects.filter(source=source, status__in=PENDING).values_list("pk", flat=True)
        )
        if not groups:
            break
        statuses += [s for group in groups for s in do_process_documents(document_ids=group)]
    return statuses


def signed_in(member: Any) -> Client:
    """A browser-like client with `member`'s session (no bearer token)."""
    client = Client()
    client.force_login(member.user)
    return client
