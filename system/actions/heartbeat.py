"""Record that a worker is alive, and that it stopped."""

from __future__ import annotations

import os
import socket

from django.utils import timezone

from system.models import WorkerHeartbeat


def do_record_heartbeat(*, worker_id: str) -> WorkerHeartbeat:
    """Upsert this worker's heartbeat row with the current time."""
    now = timezone.now()
    defaults: dict[str, object] = {"last_seen_at": now, "stopped_at": None}
    heartbeat, _ = WorkerHeartbeat.objects.update_or_create(
        worker_id=worker_id,
        defaults=defaults,
        create_defaults={
            **defaults,
            "hostname": socket.gethostname()[:255],
            "pid": os.getpid(),
            "started_at": now,
        },
    )
    return heartbeat


def do_record_worker_stopped(*, worker_id: str) -> None:
    """Mark a cleanly stopped worker so health does not wait for it to go stale."""
    WorkerHeartbeat.objects.filter(worker_id=worker_id).update(stopped_at=timezone.now())
