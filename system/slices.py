"""Bounded slices of background work, and how a slice is told to stop.

A worker task used to take a group of documents all the way through the pipeline: a group of
big PDFs held the (single) worker for half an hour, a cancelled source kept embedding until
its task ended, and a SIGTERM had nothing to hand back but the whole group. Now a task runs
one *slice*: at most `seconds` of work, after which the code doing it stops at its next
*checkpoint* (between embedding batches, between extraction windows, while waiting for the
parser) and the caller queues what is left as a new task, behind the other sources' work.

The same checkpoints stop a slice early when its source is cancelled (`stop_check`, asked at
most once a second) or when the worker is shutting down (`request_shutdown`, set by a SIGTERM
handler). Every stage is resumable, so stopping at a checkpoint loses nothing: what finished
was committed, what did not is done by the next slice.

Code outside a slice (a management command processing inline, a task that is not sliced)
passes checkpoints freely.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

# Why a slice stopped early; the caller decides what to queue again.
BUDGET = "budget"  # its time is up: the rest goes behind the other sources' work
CANCELLED = "cancelled"  # its source was cancelled or is being deleted: nothing goes on
SHUTDOWN = "shutdown"  # the worker is stopping: the rest goes back to the queue at once

_shutdown = threading.Event()


def request_shutdown() -> None:
    """Ask the slice in flight (in any thread of this process) to stop at its next
    checkpoint; called from a worker's signal handler."""
    _shutdown.set()


def shutdown_requested() -> bool:
    return _shutdown.is_set()


def clear_shutdown() -> None:
    """For a process that goes on after a shutdown was handled (tests)."""
    _shutdown.clear()


class SliceInterrupted(BaseException):
    """Raised at a checkpoint to end the slice early. A BaseException, like
    KeyboardInterrupt, so the `except Exception` that turns a stage's errors into a failed
    document lets it through: stopping is not failing."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(slots=True)
class WorkSlice:
    """A budget of `seconds` and a way to learn that the work was cancelled."""

    seconds: float
    stop_check: Callable[[], bool] = lambda: False
    check_every: float = 1.0
    started: float = field(default_factory=time.monotonic)
    _checked: float = 0.0

    def stop_reason(self) -> str | None:
        """Why the slice should stop now, or None to go on."""
        if _shutdown.is_set():
            return SHUTDOWN
        now = time.monotonic()
        if now - self._checked >= self.check_every:
            self._checked = now
            if self.stop_check():
                return CANCELLED
        if now - self.started >= self.seconds:
            return BUDGET
        return None


_current: contextvars.ContextVar[WorkSlice | None] = contextvars.ContextVar(
    "work_slice", default=None
)


@contextmanager
def work_slice(budget: WorkSlice) -> Iterator[WorkSlice]:
    """Run the body as one slice: checkpoints inside it may raise SliceInterrupted."""
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)


def active() -> bool:
    """Whether the calling code runs inside a slice."""
    return _current.get() is not None


def stop_reason() -> str | None:
    """Why the current slice should stop (always None outside a slice: a task that is not
    sliced runs to its end, or is handed back whole by the worker's stop)."""
    current = _current.get()
    return None if current is None else current.stop_reason()


def checkpoint() -> None:
    """A safe place to stop: raise SliceInterrupted if the slice should stop here."""
    reason = stop_reason()
    if reason is not None:
        raise SliceInterrupted(reason)
