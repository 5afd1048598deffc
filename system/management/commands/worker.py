"""`manage.py worker`: django-tasks-db's db_worker plus a heartbeat the app can read.

All of db_worker's options apply (--queue-name, --interval, --batch, --max-tasks, ...).
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV
from django_tasks_db.management.commands import db_worker

from system.heartbeat import HeartbeatThread


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
        try:
            super().handle(*args, **options)
        finally:
            heartbeat.stop()
