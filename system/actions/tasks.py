"""Recover tasks whose worker died while running them.

django-tasks-db marks a claimed task RUNNING and trusts the worker to finish it; a worker
killed mid-task (OOM, SIGKILL, a lost machine) leaves it RUNNING forever. Every task of
ours is idempotent and resumable, so the safe fix is to hand such a task back to the queue
once its worker's heartbeat has gone stale.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from system.models import WorkerHeartbeat

logger = logging.getLogger(__name__)


@transaction.atomic
def do_requeue_orphaned_tasks() -> int:
    """Put RUNNING tasks whose worker is not alive back to READY; returns how many."""
    stale_before = timezone.now() - timedelta(seconds=settings.WORKER_STALE_AFTER_SECONDS)
    live = set(
        WorkerHeartbeat.objects.filter(
            stopped_at__isnull=True, last_seen_at__gte=stale_before
        ).values_list("worker_id", flat=True)
    )
    orphans = [
        result.pk
        for result in DBTaskResult.objects.select_for_update(skip_locked=True)
        .filter(status=TaskResultStatus.RUNNING)
        .only("pk", "worker_ids")
        if not result.worker_ids or result.worker_ids[-1] not in live
    ]
    if orphans:
        _back_to_ready(DBTaskResult.objects.filter(pk__in=orphans))
        logger.warning(
            "Re-queued %d task(s) whose worker stopped without finishing them", len(orphans)
        )
    return len(orphans)


def do_hand_back_task(*, task_id: UUID | str) -> bool:
    """Put a RUNNING task back to READY, as a stopping worker does with the task it holds
    (system/worker.py); whether it was RUNNING."""
    return _back_to_ready(DBTaskResult.objects.filter(pk=task_id)) > 0


def _back_to_ready(results: QuerySet[DBTaskResult]) -> int:
    """The RUNNING ones of `results` queued again, as if never started; how many."""
    return results.filter(status=TaskResultStatus.RUNNING).update(
        status=TaskResultStatus.READY, started_at=None
    )
