"""The retrieval thread pool: statements that overlap with the search instead of queueing.

The keyword search runs on a small pool of threads with their own database connections
(RETRIEVAL_THREADS, default 2) while the calling thread does the vector search, recognition
and graph expansion, and the access counts are written there after the answer is returned:
on two cores the two heaviest statements then overlap. A caller inside a transaction gets
everything on its own connection, in order: other connections could not see its
uncommitted rows (tests, and any caller that wrapped the search in `atomic`), and its
access counts commit or roll back with it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection

logger = logging.getLogger(__name__)
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _retrieval_pool() -> ThreadPoolExecutor | None:
    """The shared pool, made on first use; None when RETRIEVAL_THREADS is 0 or the caller is
    inside a transaction (see the module docstring)."""
    global _pool
    threads = int(settings.RETRIEVAL_THREADS)
    if threads <= 0 or connection.in_atomic_block:
        return None
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="retrieval")
        return _pool


def close_retrieval_pool() -> None:
    """Close the pool threads' database connections and the pool (test teardown: a
    connection left open would keep the test database from being dropped). Each thread
    takes exactly one closing job: the jobs wait for each other at a barrier."""
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is None:
        return
    threads = pool._max_workers
    barrier = threading.Barrier(threads)

    def close() -> None:
        connection.close()
        barrier.wait(timeout=10)

    for job in [pool.submit(close) for _ in range(threads)]:
        job.result()
    pool.shutdown()


def _own_connection[T](call: Callable[[], T]) -> tuple[T, float]:
    """Run `call` on a pool thread: its connection is dropped first if it broke or outlived
    CONN_MAX_AGE (nothing else tidies connections outside requests). Returns the result and
    the milliseconds it took."""
    close_old_connections()
    started = time.perf_counter()
    result = call()
    return result, (time.perf_counter() - started) * 1000


def start[T](call: Callable[[], T]) -> Future[tuple[T, float]]:
    """`call` on the pool when there is one, else now, here (a finished Future either way).
    The Future holds the result and the milliseconds it took."""
    pool = _retrieval_pool()
    if pool is not None:
        return pool.submit(_own_connection, call)
    done: Future[tuple[T, float]] = Future()
    started = time.perf_counter()
    try:
        done.set_result((call(), (time.perf_counter() - started) * 1000))
    except Exception as exc:
        done.set_exception(exc)
    return done


def log_access_failure(job: Future[Any]) -> None:
    """Done-callback of the access-count job: nobody waits for it, so a failure is logged."""
    if (exc := job.exception()) is not None:
        logger.warning("recording retrieval access counts failed: %s", exc)
