"""Run the parsers in a child process, so a hostile or broken file costs a child, not the worker.

Parser libraries can loop for minutes, allocate gigabytes or crash in C code on crafted input.
In the worker process (threads, torch, open database connections) any of those would take
everything down, and a thread cannot be stopped from outside. A child process with an address
space limit can be killed on a deadline and replaced.

The child is started with "spawn", never "fork": forking a process that has threads (torch's
pools, database keep-alives) can copy locks held by threads that do not exist in the child and
deadlock it. Like any spawned child it imports the caller's main module first, so entry
scripts must keep their work under `if __name__ == "__main__":` (manage.py, gunicorn and
pytest do). Starting a child costs a fraction of a second to a few seconds of imports, so one
child is kept alive and reused; it is replaced only after it was killed or crashed.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import multiprocessing
import resource
import signal
import threading
import time
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from ingest.parsers.base import PageProgress, ParsedDocument, ParseError, ParserLimits
from ingest.parsers.detect import size_error
from ingest.parsers.formats import parse
from system import slices

logger = logging.getLogger(__name__)

MB = 1024 * 1024
# Imports in a fresh interpreter (lxml, pypdf, trafilatura) take a second or two on a loaded
# machine; this bounds the wait for a child that never gets ready, not the parsing.
STARTUP_TIMEOUT_SECONDS = 60.0
_STOP_GRACE_SECONDS = 2.0
# How often a wait for the child looks whether the work was cancelled or the worker stops.
_STOP_POLL_SECONDS = 0.5
# The child reports the pages it has read at most this often (the first page at once).
PROGRESS_INTERVAL_SECONDS = 0.25


class IsolatedParser:
    """One reusable child process; one request at a time (callers queue on the lock)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None

    def parse(
        self,
        data: bytes,
        *,
        filename: str,
        limits: ParserLimits,
        on_page: PageProgress | None = None,
    ) -> ParsedDocument:
        """`formats.parse` in the child; `on_page` hears of the child's pages as it reads them
        (at most every `PROGRESS_INTERVAL_SECONDS`), in this process."""
        if len(data) > limits.max_file_bytes:
            # Checked here too so an oversized file is not copied through the pipe first.
            raise size_error(len(data), limits=limits)
        with self._lock:
            conn = self._ready_connection()
            try:
                conn.send((data, filename, limits, on_page is not None))
                reply = self._wait_for_reply(conn, limits, on_page)
                if reply is None:
                    self._stop(kill=True)
                    raise ParseError(
                        f"Parsing took longer than {limits.timeout_seconds:g} s; the file is too "
                        "large or too complex to read. Split it into smaller files and upload "
                        "those."
                    )
                kind, payload = reply
            except (EOFError, OSError) as exc:
                # The pipe closed: the child is dying; let it finish so its exit code is real.
                exitcode = self._stop(kill=False)
                if exitcode == -signal.SIGTERM and slices.active():
                    # Not the file's fault: the machine is stopping the worker's processes.
                    # The document goes back to the queue and the worker stops too.
                    slices.request_shutdown()
                    raise slices.SliceInterrupted(slices.SHUTDOWN) from exc
                raise ParseError(_crash_message(exitcode, limits=limits)) from exc
            if kind == "exiting":
                self._stop(kill=False)
        if kind == "ok" and isinstance(payload, ParsedDocument):
            return payload
        if isinstance(payload, ParseError):
            raise payload
        raise ParseError(f"The parser failed on this file ({payload}).")

    def _wait_for_reply(
        self, conn: Connection, limits: ParserLimits, on_page: PageProgress | None
    ) -> tuple[str, Any] | None:
        """The child's reply, waiting up to the time limit; None if none came. Progress
        messages on the way go to `on_page`. A cancelled source or a stopping worker
        (system/slices.py) does not wait for a long parse: the child is killed (it keeps
        nothing) and the document is parsed by a later slice."""
        deadline = time.monotonic() + limits.timeout_seconds
        while True:
            while not conn.poll(min(_STOP_POLL_SECONDS, max(0.0, deadline - time.monotonic()))):
                reason = slices.stop_reason()
                if reason in {slices.CANCELLED, slices.SHUTDOWN}:
                    self._stop(kill=True)
                    raise slices.SliceInterrupted(reason)
                if time.monotonic() >= deadline:
                    return None
            kind, payload = conn.recv()
            if kind != "progress":
                return kind, payload
            if on_page is not None:
                on_page(*payload)

    def shutdown(self) -> None:
        """Stop the child, if any; the next `parse` starts a new one."""
        # At interpreter exit another thread may be stuck mid-request holding the lock; the
        # child has to go regardless, so do not wait for the lock for long.
        locked = self._lock.acquire(timeout=_STOP_GRACE_SECONDS)
        try:
            self._stop(kill=False)
        finally:
            if locked:
                self._lock.release()

    def _ready_connection(self) -> Connection:
        if self._process is not None and self._process.is_alive() and self._conn is not None:
            return self._conn
        self._stop(kill=True)
        context = multiprocessing.get_context("spawn")
        parent_end, child_end = context.Pipe(duplex=True)
        process = context.Process(
            target=serve,
            args=(child_end,),
            name="graphloom-parser",
            # Daemonic children are killed when this process exits normally; a daemonic
            # process may not have children, so a daemonic caller gets a normal child.
            daemon=not multiprocessing.current_process().daemon,
        )
        process.start()
        # Without this the pipe stays open in this process and a dead child is never noticed.
        child_end.close()
        self._process, self._conn = process, parent_end
        if not parent_end.poll(STARTUP_TIMEOUT_SECONDS):
            self._stop(kill=True)
            raise RuntimeError(
                f"The parser process did not start within {STARTUP_TIMEOUT_SECONDS:g} s."
            )
        try:
            hello = parent_end.recv()
        except (EOFError, OSError):
            # Not the file's fault: no file was sent yet. Typically the caller's main module
            # starts work when imported (spawn imports it in the child; guard it with
            # `if __name__ == "__main__":`). The child's traceback is on stderr.
            exitcode = self._stop(kill=True)
            raise RuntimeError(
                f"The parser process exited while starting (exit code {exitcode})."
            ) from None
        if hello != ("ready", None):
            raise RuntimeError(f"The parser process sent {hello!r} instead of ready.")
        return parent_end

    def _stop(self, *, kill: bool) -> int | None:
        """End the child and forget it; returns its exit code when it had already died."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        exitcode: int | None = None
        if process is not None:
            if process.is_alive() and not kill and conn is not None:
                with contextlib.suppress(OSError):
                    conn.send(None)  # asks the child to return from its loop
                process.join(_STOP_GRACE_SECONDS)
            if process.is_alive():
                process.kill()
            process.join(_STOP_GRACE_SECONDS)
            exitcode = process.exitcode
            if not process.is_alive():
                process.close()
        if conn is not None:
            conn.close()
        return exitcode


def _crash_message(exitcode: int | None, *, limits: ParserLimits) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            how = f"it was stopped by {signal.Signals(-exitcode).name}"
        except ValueError:
            how = f"it was stopped by signal {-exitcode}"
    elif exitcode is not None:
        how = f"it exited with status {exitcode}"
    else:
        how = "it stopped responding"
    return (
        f"The parser ran out of memory or crashed on this file ({how}; memory limit "
        f"{limits.memory_mb:,} MB). The file may be damaged, or too large to read."
    )


def limit_memory(memory_mb: int | None) -> None:
    """Cap this process's address space (None: lift the cap); beyond it, MemoryError.

    Only the soft limit is set, so it can be lifted again between requests: receiving the
    next file must not fail because the previous one had a small cap.
    """
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = hard if memory_mb is None else memory_mb * MB
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))


def serve(conn: Connection) -> None:
    """The child's loop: parse each request, reply ('ok', doc) or ('error', ParseError).

    After running out of memory it replies ('exiting', ParseError) and returns. When the
    request asks for it, ('progress', (pages read, page count)) messages come before the
    reply while a paged file is read.
    """
    # Ctrl-C in a terminal reaches the whole process group; the parent decides when we stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn.send(("ready", None))
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if request is None:
            return
        data, filename, limits, wants_progress = request
        del request
        exhausted = False
        reply: tuple[str, Any]
        limit_memory(limits.memory_mb)
        try:
            on_page = _PageReporter(conn) if wants_progress else None
            reply = ("ok", parse(data, filename=filename, limits=limits, on_page=on_page))
        except ParseError as exc:
            reply = ("error", exc)
        except MemoryError:
            exhausted = True
            reply = ("error", None)  # built below, once the memory is back
        except Exception as exc:  # parse() converts library errors; this is a last resort
            logger.exception("Parser crashed on %r", filename)
            reply = ("error", ParseError(f"The parser failed on this file ({type(exc).__name__})."))
        finally:
            # The cap bounds parsing; sending the (size-limited) result must not trip over it.
            limit_memory(None)
        del data
        if exhausted:
            # "exiting" tells the parent not to send this process another file.
            reply = ("exiting", ParseError(_out_of_memory(limits)))
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return  # the parent is gone (or gave up on this request and killed us)
        if exhausted:
            return  # a fresh process is cheaper than trusting a heap that just ran dry


class _PageReporter:
    """Sends the child's page progress to the parent: the first page, then at most one
    message per `PROGRESS_INTERVAL_SECONDS` (a pipe message per page of a 2,000-page PDF
    would be noise, and each is a wake-up of the parent)."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._last: float | None = None

    def __call__(self, read: int, page_count: int) -> None:
        now = time.monotonic()
        if self._last is not None and now - self._last < PROGRESS_INTERVAL_SECONDS:
            return
        self._last = now
        self._conn.send(("progress", (read, page_count)))


def _out_of_memory(limits: ParserLimits) -> str:
    return (
        f"The parser ran out of memory on this file (limit {limits.memory_mb:,} MB). The file "
        "may be damaged, or too large to read; split it into smaller files."
    )


_default = IsolatedParser()


def parse_isolated(
    data: bytes, *, filename: str, limits: ParserLimits, on_page: PageProgress | None = None
) -> ParsedDocument:
    """`parse` in the shared child process, with `limits.timeout_seconds` and `memory_mb`;
    `on_page(read, page_count)` is called in this process as a paged file is read."""
    return _default.parse(data, filename=filename, limits=limits, on_page=on_page)


def shutdown() -> None:
    """Stop the shared child process (it is started again on the next call)."""
    _default.shutdown()


atexit.register(shutdown)
