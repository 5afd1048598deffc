"""Hand work to the task worker after the transaction that asked for it commits, naming the
task by its dotted path.

Actions enqueue through here instead of importing task modules, which import the actions:
no circle, no import inside a function, and the worker never sees an id whose row is not
committed yet. The path is resolved when the transaction commits, like a middleware path
in settings.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

from django.db import transaction
from django.utils.module_loading import import_string


def _enqueue(
    task_path: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    priority: int | None,
    run_after: datetime | None,
) -> None:
    task = import_string(task_path)
    if priority is not None or run_after is not None:
        task = task.using(priority=priority, run_after=run_after)
    task.enqueue(*args, **kwargs)


def enqueue_on_commit(
    task_path: str,
    *args: Any,
    priority: int | None = None,
    run_after: datetime | None = None,
    **kwargs: Any,
) -> None:
    """Enqueue the task at `task_path` (e.g. "ingest.tasks.crawl_source") with JSON-safe
    `args` and `kwargs` once the current transaction commits (at once outside a
    transaction). `priority` and `run_after` order the queue: higher priority first, then
    earlier `run_after` (ingest/dispatch.py uses a past one to take sources in turn)."""
    transaction.on_commit(partial(_enqueue, task_path, args, kwargs, priority, run_after))
