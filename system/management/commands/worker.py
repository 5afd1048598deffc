"""`manage.py worker`: django-tasks-db's db_worker plus a heartbeat the app can read, and the
scheduler that queues the upkeep jobs when due (system/scheduler.py; off with
GRAPHLOOM_UPKEEP_CHECK_SECONDS=0).

All of db_worker's options apply (--queue-name, --interval, --batch, --max-tasks, ...).
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV
from django_tasks_db.management.commands import db_worker

from system.heartbeat import HeartbeatThread
from system.scheduler import UpkeepThread


class Command(db_worker.Command):
    help = "Run the background task worker (django-tasks-db) with a liveness heartbeat."

    def handle(self, *args: Any, **options: Any) -> None:
        reloading_parent = options["reload"] and os.environ.get(DJANGO_AUTORELOAD_ENV) != "true"
        if reloading_parent:
            # The autoreloader's parent only watches files; its child does the work and beats.
            super().handle(*args, **options)
            return
        heartbeat = HeartbeatThread(
            worker_id=options["worker_id"], interval=settings.WORKER_HEARTBEAT_SECONDS
        )
        heartbeat.start()
        upkeep = None
        if settings.UPKEEP_CHECK_SECONDS > 0:
            upkeep = UpkeepThread(
                worker_id=options["worker_id"], interval=settings.UPKEEP_CHECK_SECONDS
            )
            upkeep.start()
        try:
            super().handle(*args, **options)
        finally:
            if upkeep is not None:
                upkeep.stop()
            heartbeat.stop()
