"""A task the worker tests enqueue: importable by the worker process like any app task."""

from __future__ import annotations

import time

from django.tasks import task

from system.models import WorkerHeartbeat


@task
def mark_worker_seen(worker_id: str) -> int:
    """Idempotent: tags the heartbeat row of the worker that ran it, returns rows touched."""
    return WorkerHeartbeat.objects.filter(worker_id=worker_id).update(hostname="task-ran")


@task
def sleep_for(seconds: float) -> float:
    """A task that is not sliced and runs long: what a worker's stop must hand back."""
    time.sleep(seconds)
    return seconds
