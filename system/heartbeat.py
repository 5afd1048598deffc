"""A background thread that keeps a worker's heartbeat row fresh.

It runs beside django-tasks-db's worker loop (which knows nothing of liveness) and uses its
own database connection, so a long task never delays the beat.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError

from system.actions.heartbeat import do_record_heartbeat, do_record_worker_stopped
from system.actions.tasks import do_requeue_orphaned_tasks
from system.periodic import PeriodicThread

logger = logging.getLogger(__name__)


# Look for tasks orphaned by dead workers every this many beats (and once at start).
REQUEUE_EVERY_BEATS = 10


class HeartbeatThread(PeriodicThread):
    failure = "Could not record worker heartbeat; retrying"

    def __init__(self, *, worker_id: str, interval: float) -> None:
        super().__init__(name=f"heartbeat-{worker_id[:8]}", interval=interval)
        self.worker_id = worker_id
        self._beats = 0

    def tick(self) -> None:
        do_record_heartbeat(worker_id=self.worker_id)
        if self._beats % REQUEUE_EVERY_BEATS == 0:
            do_requeue_orphaned_tasks()
        self._beats += 1

    def stop(self) -> None:
        """Stop beating and record a clean stop (from the worker's main thread)."""
        super().stop()
        try:
            do_record_worker_stopped(worker_id=self.worker_id)
        except DatabaseError:
            logger.exception("Could not record worker stop")
