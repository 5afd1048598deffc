"""The worker's stop (system/worker.py): a signal while no task runs never leaves a task
RUNNING. The loop may claim a task (committed as RUNNING) just before the signal and start
it just after; the library's stop exited in between, and the task waited for a heartbeat
check. CI caught it once (tests/ingest/test_worker_resume.py, under load)."""

from __future__ import annotations

import signal

import pytest
from django.core.checks import Tags, registry
from django.tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from system.management.commands.worker import Command as WorkerCommand
from system.worker import HandingBackWorker
from tests.system.sample_tasks import sleep_for

pytestmark = pytest.mark.django_db(transaction=True)


def worker() -> HandingBackWorker:
    return HandingBackWorker(
        stop_grace=1.0,
        queue_names=["default"],
        interval=1.0,
        batch=False,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="stopping-worker",
        excluded_queue_names=[],
    )


def test_a_task_claimed_as_the_stop_came_goes_back_to_the_queue_unrun():
    task = DBTaskResult.objects.get(pk=sleep_for.enqueue(120).id)
    stopping = worker()
    task.claim(stopping.worker_id)  # the loop claimed it, then the signal came
    assert DBTaskResult.objects.get(pk=task.pk).status == TaskResultStatus.RUNNING

    stopping.shutdown(signal.SIGTERM, None)  # idle: no task started; the loop is told to end
    assert stopping.running is False
    stopping.run_task(task)  # what the loop does next with the claimed task

    task.refresh_from_db()
    assert task.status == TaskResultStatus.READY
    assert task.started_at is None
    assert task.return_value is None  # not run (it would have slept two minutes)


def test_the_worker_runs_every_tag_of_system_checks_but_the_urlconfs():
    """A worker serves no URL (importing the URLconf was most of its checks' time); every
    other tag the registry knows, deployment ones included, still runs at its start."""
    checked = set(WorkerCommand.requires_system_checks)
    assert Tags.urls not in checked
    assert set(registry.registry.tags_available(deployment_checks=True)) - {Tags.urls} <= checked
