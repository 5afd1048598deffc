"""Recovering tasks orphaned by dead workers."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from system.actions.heartbeat import do_record_heartbeat, do_record_worker_stopped
from system.actions.tasks import do_requeue_orphaned_tasks
from system.models import WorkerHeartbeat
from tests.system.sample_tasks import mark_worker_seen

pytestmark = pytest.mark.django_db


def running_task(worker_id: str) -> DBTaskResult:
    result = mark_worker_seen.enqueue("x")
    row = DBTaskResult.objects.get(pk=result.id)
    row.claim(worker_id)
    row.refresh_from_db()
    assert row.status == "RUNNING"
    return row


def test_tasks_of_dead_or_stopped_workers_go_back_to_the_queue():
    do_record_heartbeat(worker_id="alive")
    do_record_heartbeat(worker_id="stopped")
    do_record_worker_stopped(worker_id="stopped")
    do_record_heartbeat(worker_id="silent")
    WorkerHeartbeat.objects.filter(worker_id="silent").update(
        last_seen_at=timezone.now() - timedelta(hours=1)
    )
    kept = running_task("alive")
    orphans = [running_task("stopped"), running_task("silent"), running_task("never-registered")]
    assert do_requeue_orphaned_tasks() == 3
    kept.refresh_from_db()
    assert kept.status == "RUNNING"
    for row in orphans:
        row.refresh_from_db()
        assert row.status == "READY"
    assert do_requeue_orphaned_tasks() == 0
