"""Real worker and web processes: heartbeat, task execution, stale detection, clean stop."""

from __future__ import annotations

import shutil
import signal
import subprocess
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.db import transaction
from django.test import Client, override_settings
from django_tasks_db.models import DBTaskResult

from system import embedded_postgres
from system.models import WorkerHeartbeat
from tests.support import fetch, free_port, start_manage, start_worker, subprocess_env, wait_for
from tests.system.sample_tasks import mark_worker_seen

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def worker_status() -> str:
    return Client().get("/api/v1/health").json()["worker"]["status"]


@override_settings(WORKER_STALE_AFTER_SECONDS=1.5)
def test_health_reports_a_killed_worker_as_stale():
    worker = start_worker("w-killed")
    try:
        wait_for(lambda: worker_status() == "ok", what="the worker's first heartbeat")
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    wait_for(lambda: worker_status() == "stale", what="the heartbeat to go stale")
    assert WorkerHeartbeat.objects.get(worker_id="w-killed").stopped_at is None


def test_worker_runs_tasks_enqueued_on_commit_and_records_a_clean_stop():
    worker = start_worker("w-clean")
    try:
        wait_for(
            lambda: WorkerHeartbeat.objects.filter(worker_id="w-clean").exists(), what="heartbeat"
        )
        with transaction.atomic():
            transaction.on_commit(lambda: mark_worker_seen.enqueue("w-clean"))
            assert not DBTaskResult.objects.exists()  # nothing before commit
        wait_for(
            lambda: WorkerHeartbeat.objects.filter(
                worker_id="w-clean", hostname="task-ran"
            ).exists(),
            what="the task to run",
        )
        # The task's body ran; the worker records its result just after (under load the
        # two are seconds apart).
        wait_for(
            lambda: DBTaskResult.objects.get().status == "SUCCESSFUL", what="the task's result"
        )
    finally:
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0
    assert WorkerHeartbeat.objects.get(worker_id="w-clean").stopped_at is not None


@pytest.mark.slow(reason="web and worker processes")
def test_serve_runs_web_and_worker_and_ctrl_c_stops_both():
    port = free_port()
    serve = start_manage(
        "serve", f"127.0.0.1:{port}", stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: '"status": "ok"' in fetch(base + "/api/v1/health")[2], what="web + worker")
        status, url, page = fetch(base + "/")
        assert status == 200
        assert url.endswith("/setup/")
        assert "Create account and workspace" in page
    finally:
        serve.send_signal(signal.SIGINT)
        output = serve.communicate(timeout=60)[0].decode()
    assert serve.returncode == 0, output
    assert "Stopped." in output
    assert fetch(base + "/api/v1/health")[0] == 0
    wait_for(
        lambda: not WorkerHeartbeat.objects.filter(stopped_at__isnull=True).exists(),
        what="the worker to record its stop",
    )
    # The suite's database was running before, so serve left it running.
    assert embedded_postgres.running_server(Path(settings.GRAPHLOOM_PGDATA).resolve()) is not None


@pytest.mark.slow(reason="a new embedded server, migrated")
@pytest.mark.skipif(bool(settings.DATABASE_URL), reason="needs the embedded server")
def test_serve_migrates_a_new_embedded_database_and_stops_it_on_exit():
    pgdata = Path(settings.BASE_DIR) / "var" / f"test-serve-{uuid.uuid4().hex[:8]}"
    port = free_port()
    env = subprocess_env(GRAPHLOOM_PGDATA=str(pgdata), GRAPHLOOM_DB_NAME="graphloom")
    serve = start_manage(
        "serve",
        f"127.0.0.1:{port}",
        "--migrate",
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: '"status": "ok"' in fetch(base + "/api/v1/health")[2], what="web + worker")
        assert fetch(base + "/")[1].endswith("/setup/")
    finally:
        serve.send_signal(signal.SIGINT)
        output = serve.communicate(timeout=60)[0].decode()
        stopped = embedded_postgres.running_server(pgdata) is None
        embedded_postgres.stop_server(pgdata)
        shutil.rmtree(pgdata, ignore_errors=True)
        (pgdata.parent / f".{pgdata.name}.lock").unlink(missing_ok=True)
    assert serve.returncode == 0, output
    assert "Embedded PostgreSQL stopped." in output
    assert stopped
