"""A background thread that keeps a worker's heartbeat row fresh.

It runs beside django-tasks-db's worker loop (which knows nothing of liveness) and uses its
own database connection, so a long task never delays the beat.
"""

from __future__ import annotations

import logging
import threading

from django.db import DatabaseError, connection

from system.actions.heartbeat import do_record_heartbeat, do_record_worker_stopped
from system.actions.tasks import do_requeue_orphaned_tasks

logger = logging.getLogger(__name__)


# Look for tasks orphaned by dead workers every this many beats (and once at start).
REQUEUE_EVERY_BEATS = 10


class HeartbeatThread(threading.Thread):
    def __init__(self, *, worker_id: str, interval: float) -> None:
        super().__init__(name=f"heartbeat-{worker_id[:8]}", daemon=True)
        self.worker_id = worker_id
        self.interval = interval
        self._stop_event = threading.Event()

    def run(self) -> None:
        beats = 0
        try:
            while not self._stop_event.is_set():
                try:
                    do_record_heartbeat(worker_id=self.worker_id)
                    if beats % REQUEUE_EVERY_BEATS == 0:
                        do_requeue_orphaned_tasks()
                    beats += 1
                except DatabaseError:
                    logger.exception("Could not record worker heartbeat; retrying")
                    connection.close()
                self._stop_event.wait(self.interval)
        finally:
            connection.close()

    def stop(self) -> None:
        """Stop beating and record a clean stop (from the worker's main thread)."""
        self._stop_event.set()
        self.join(timeout=self.interval + 5)
        try:
            do_record_worker_stopped(worker_id=self.worker_id)
        except DatabaseError:
            logger.exception("Could not record worker stop")
