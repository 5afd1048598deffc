"""The task worker's loop (django-tasks-db's), with a stop that hands work back.

django-tasks-db stops after the task in flight on a first SIGTERM and kills it on a second;
a task runs as long as it runs, and a killed one is left RUNNING until some worker notices
a stale heartbeat. Here a SIGTERM (or SIGINT, SIGQUIT):

1. asks the slice in flight to stop at its next checkpoint (system/slices.py): it queues
   the rest of its work as a new task and returns, and the worker exits 0;
2. if the task has not returned within WORKER_STOP_GRACE_SECONDS (a task that is not
   sliced, a call that does not come back), or at a second signal, puts the task back to
   READY itself, records the worker stopped and exits 0 at once. Every task is resumable,
   so the next worker redoes at most that task's unfinished part.

A signal while no task runs ends the loop before it claims another one: the library's own
stop exits at once, and a task it had just claimed (marked RUNNING, not yet started) was
left so until a heartbeat check; here a task claimed once the stop was asked for goes back
to READY unrun.

A SIGKILL still leaves the task RUNNING; the heartbeat's orphan check hands it back.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from types import FrameType
from typing import Any

from django.db import DatabaseError, close_old_connections
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from system import slices
from system.actions.heartbeat import do_record_worker_stopped
from system.actions.tasks import do_hand_back_task

logger = logging.getLogger(__name__)


class HandingBackWorker(Worker):
    def __init__(self, *, stop_grace: float, **options: Any) -> None:
        super().__init__(**options)
        self.stop_grace = stop_grace
        self.signalled = False
        self._current: DBTaskResult | None = None
        self._watchdog: threading.Timer | None = None

    def shutdown(self, signum: int, frame: FrameType | None) -> None:
        if self.signalled:
            logger.warning("Received %s again: handing the task back now", signum)
            self.hand_back_and_exit()
            return
        self.signalled = True
        self.running = False
        slices.request_shutdown()
        if not self.running_task and self._current is None:
            # No sys.exit here: the loop may have claimed a task a moment ago (committed,
            # RUNNING) and not started it yet; it ends on its own, and run_task hands such a
            # task back.
            logger.info("Received signal %s while idle: stopping", signum)
            return
        logger.warning(
            "Received signal %s: the task in flight stops at its next checkpoint "
            "(handed back after %g s at most)",
            signum,
            self.stop_grace,
        )
        self._watchdog = threading.Timer(self.stop_grace, self.hand_back_and_exit)
        self._watchdog.daemon = True
        self._watchdog.start()

    def run_task(self, db_task_result: DBTaskResult) -> None:
        self._current = db_task_result
        try:
            if self.signalled:  # claimed after the stop was asked for: not started
                self._hand_back(db_task_result)
                return
            super().run_task(db_task_result)
        finally:
            self._current = None

    @staticmethod
    def _hand_back(task: DBTaskResult) -> None:
        if do_hand_back_task(task_id=task.pk):
            logger.warning("Handed task %s back to the queue", task.pk)

    def hand_back_and_exit(self) -> None:
        """Put the task in flight back to the queue and end the process (exit status 0)."""
        current = self._current
        try:
            close_old_connections()
            if current is not None:
                self._hand_back(current)
            do_record_worker_stopped(worker_id=self.worker_id)
        except DatabaseError:
            logger.exception("Could not hand the task back; the heartbeat check will")
        finally:
            exit_now()


def exit_now() -> None:
    """End the process with status 0 without waiting for threads (an abandoned HTTP call, a
    math library's pool): what mattered was committed or handed back before this."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(0)
