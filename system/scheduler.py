"""A background thread that queues the scheduled upkeep jobs (system/upkeep.py) when due.

It runs beside django-tasks-db's worker loop, like the heartbeat, with its own database
connection: it only queues the runs (one task per due job, claimed so that one worker of
several queues it); the worker loops run them like any other task.
"""

from __future__ import annotations

import logging
import threading

from django.db import DatabaseError, connection

from system.actions.upkeep import do_queue_due_jobs

logger = logging.getLogger(__name__)


class UpkeepThread(threading.Thread):
    """Beside the worker loop, like the heartbeat: every UPKEEP_CHECK_SECONDS, queue the
    due jobs this worker wins (its own database connection; a database hiccup is logged
    and retried at the next check, never the end of the worker)."""

    def __init__(self, *, worker_id: str, interval: float) -> None:
        super().__init__(name=f"upkeep-{worker_id[:8]}", daemon=True)
        self.worker_id = worker_id
        self.interval = interval
        self._stop_event = threading.Event()

    def run(self) -> None:
        try:
            while not self._stop_event.is_set():
                try:
                    do_queue_due_jobs(worker_id=self.worker_id)
                except DatabaseError:
                    logger.exception("Could not look for due upkeep jobs; retrying")
                    connection.close()
                self._stop_event.wait(self.interval)
        finally:
            connection.close()

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=self.interval + 5)
