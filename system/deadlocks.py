"""Running a transaction again when PostgreSQL broke a deadlock by aborting it.

Two workers writing one workspace can lock the same rows or advisory locks in opposite
orders (say, entity names shared by their documents, taken window by window); PostgreSQL
then aborts one of the two transactions (SQLSTATE 40P01) and the other goes on. The aborted
one wrote nothing, so doing it again is safe when its writes are idempotent — and without
that, the task failed and its documents waited for good (bench/workers.py found it).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable

from django.db import OperationalError, connection
from psycopg import errors

logger = logging.getLogger(__name__)

ATTEMPTS = 5


def is_deadlock(error: BaseException) -> bool:
    """Whether `error` (Django's wrapper or psycopg's own) is PostgreSQL's deadlock abort."""
    cause = error.__cause__ if isinstance(error, OperationalError) else error
    return isinstance(cause, errors.DeadlockDetected)


def retry_on_deadlock[T](
    work: Callable[[], T], *, attempts: int = ATTEMPTS, on_retry: Callable[[], None] = lambda: None
) -> T:
    """`work()` (which opens its own transaction), again up to `attempts` times in all when
    the database aborts it to break a deadlock; `on_retry` undoes what the failed attempt
    changed in memory. Inside an outer transaction nothing is retried: the locks the outer
    transaction holds would meet the same deadlock again."""
    for attempt in range(1, attempts + 1):
        try:
            return work()
        except OperationalError as error:
            if not is_deadlock(error) or attempt == attempts or connection.in_atomic_block:
                raise
            logger.warning("Deadlock broken by the database; trying again (%d)", attempt)
            on_retry()
            # Apart in time, the two rivals rarely meet again.
            time.sleep(random.uniform(0.05, 0.25) * attempt)  # noqa: S311 (timing, not secrets)
    raise AssertionError("unreachable")
