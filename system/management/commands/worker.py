"""`manage.py worker`: django-tasks-db's db_worker with a heartbeat the app can read, the
scheduler that queues the upkeep jobs when due (system/scheduler.py; off with
GRAPHLOOM_UPKEEP_CHECK_SECONDS=0), and a stop that hands the task in flight back to the
queue and exits 0 within WORKER_STOP_GRACE_SECONDS (system/worker.py).

All of db_worker's options apply (--queue-name, --interval, --batch, --max-tasks, ...).
With --reload (development) the library's own loop runs.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.checks import Tags
from django.core.management.base import CommandError
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV
from django_tasks_db.management.commands import db_worker

from system.heartbeat import HeartbeatThread
from system.scheduler import UpkeepThread
from system.worker import HandingBackWorker, exit_now

# Every tagged system check but the URLconf's: a worker serves no URL, and importing the
# URLconf (the API, the MCP server, every view) was 1.8 of the 2.9 CPU-seconds a worker's
# checks took at each start. Django's two untagged checks (the TASKS setting, the auth
# middleware) go with it: the worker reads its task backend at once and fails on it there.
WORKER_CHECK_TAGS = [
    tag for name, tag in vars(Tags).items() if not name.startswith("_") and tag != Tags.urls
]


class Command(db_worker.Command):
    help = "Run the background task worker (django-tasks-db) with a liveness heartbeat."
    requires_system_checks = WORKER_CHECK_TAGS

    def handle(self, *args: Any, **options: Any) -> None:
        reloading = options["reload"] and not options["batch"]
        if reloading and os.environ.get(DJANGO_AUTORELOAD_ENV) != "true":
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
        worker = None
        try:
            if reloading:
                super().handle(*args, **options)
            else:
                worker = self.build_worker(options)
                worker.configure_signals()
                worker.run()
        except SystemExit as stop:
            if stop.code not in (0, None):
                raise
        finally:
            if upkeep is not None:
                upkeep.stop()
            heartbeat.stop()
        if worker is not None and worker.signalled:
            # Threads a stopped slice abandoned (an LLM call in flight) must not hold the exit.
            exit_now()

    def build_worker(self, options: dict[str, Any]) -> HandingBackWorker:
        self.configure_logging(options["verbosity"])
        queue_names = options["queue_name"].split(",")
        excluded = options["exclude_queues"].split(",") if options["exclude_queues"] else []
        if excluded and "*" not in queue_names:
            raise CommandError("--exclude-queues can only be used with --queue-name=*")
        return HandingBackWorker(
            stop_grace=settings.WORKER_STOP_GRACE_SECONDS,
            queue_names=queue_names,
            interval=options["interval"],
            batch=options["batch"],
            backend_name=options["backend_name"],
            startup_delay=options["startup_delay"],
            max_tasks=options["max_tasks"],
            worker_id=options["worker_id"],
            excluded_queue_names=excluded,
        )
