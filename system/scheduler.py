"""A background thread that queues the scheduled upkeep jobs (system/upkeep.py) when due.

It runs beside django-tasks-db's worker loop, like the heartbeat, with its own database
connection: it only queues the runs (one task per due job, claimed so that one worker of
several queues it); the worker loops run them like any other task.
"""

from __future__ import annotations

from system.actions.upkeep import do_queue_due_jobs
from system.periodic import PeriodicThread


class UpkeepThread(PeriodicThread):
    """Beside the worker loop, like the heartbeat: every UPKEEP_CHECK_SECONDS, queue the
    due jobs this worker wins."""

    failure = "Could not look for due upkeep jobs; retrying"

    def __init__(self, *, worker_id: str, interval: float) -> None:
        super().__init__(name=f"upkeep-{worker_id[:8]}", interval=interval)
        self.worker_id = worker_id

    def tick(self) -> None:
        do_queue_due_jobs(worker_id=self.worker_id)
