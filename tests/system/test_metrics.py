"""GET /metrics (system/views.py, system/metrics.py): off unless configured, refused
without its token or outside its networks, and figures that follow what happened: queue
depth, task durations and failures, LLM tokens and cost, search and graph latencies."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from knowledge.models import LlmCall
from tests.knowledge.graph_data import make_graph
from tests.system.metrics_text import value
from tests.system.sample_tasks import mark_worker_seen

pytestmark = pytest.mark.django_db

TOKEN = "metrics-scraper-secret-0123456789"
TASK = "tests.system.sample_tasks.mark_worker_seen"


@pytest.fixture
def metrics_on(settings):
    settings.METRICS_TOKEN = TOKEN
    settings.METRICS_ALLOWED_NETWORKS = []


def scrape() -> str:
    response = Client(headers={"Authorization": f"Bearer {TOKEN}"}).get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    return response.content.decode()


def test_metrics_are_off_without_a_token_or_networks(settings):
    settings.METRICS_TOKEN = ""
    settings.METRICS_ALLOWED_NETWORKS = []
    assert Client().get("/metrics").status_code == 404


def test_metrics_refuse_without_the_token_or_with_another(metrics_on):
    missing = Client().get("/metrics")
    assert missing.status_code == 401
    assert missing["WWW-Authenticate"].startswith("Bearer")
    assert b"graphloom_" not in missing.content
    wrong = Client(headers={"Authorization": f"Bearer {TOKEN}x"}).get("/metrics")
    assert wrong.status_code == 401
    basic = Client(headers={"Authorization": f"Basic {TOKEN}"}).get("/metrics")
    assert basic.status_code == 401
    assert "graphloom_tasks_in_queue" in scrape()


def test_metrics_refuse_addresses_outside_the_allowed_networks(settings):
    settings.METRICS_TOKEN = ""
    settings.METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8"]
    assert Client().get("/metrics").status_code == 403  # the test client is 127.0.0.1
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 200
    settings.METRICS_TOKEN = TOKEN
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 401


def test_queue_depth_durations_and_failures_by_task(metrics_on):
    before = scrape()
    assert value(before, "graphloom_tasks_in_queue", task=TASK) is None
    for _ in range(3):
        mark_worker_seen.enqueue("w1")
    text = scrape()
    assert value(text, "graphloom_tasks_in_queue", task=TASK, status="ready") == 3
    waited = value(text, "graphloom_task_oldest_ready_age_seconds", task=TASK)
    assert waited is not None and waited >= 0

    # Two finish, as a worker would record them: one in 2 s, one failing after 30 s.
    first, second, _ = DBTaskResult.objects.filter(task_path=TASK).order_by("enqueued_at")
    now = timezone.now()
    DBTaskResult.objects.filter(pk=first.pk).update(
        status="SUCCESSFUL", started_at=now - timedelta(seconds=2), finished_at=now
    )
    DBTaskResult.objects.filter(pk=second.pk).update(
        status="FAILED", started_at=now - timedelta(seconds=30), finished_at=now
    )
    text = scrape()
    assert value(text, "graphloom_tasks_in_queue", task=TASK, status="ready") == 1
    assert value(text, "graphloom_task_duration_seconds_count", task=TASK) == 2
    assert value(text, "graphloom_task_duration_seconds_sum", task=TASK) == pytest.approx(32)
    assert value(text, "graphloom_task_duration_seconds_bucket", task=TASK, le="1.0") == 0
    assert value(text, "graphloom_task_duration_seconds_bucket", task=TASK, le="5.0") == 1
    assert value(text, "graphloom_task_duration_seconds_bucket", task=TASK, le="60.0") == 2
    assert value(text, "graphloom_task_failures_total", task=TASK) == 1


def test_llm_tokens_and_cost_by_purpose(metrics_on, alice):
    for prompt, completion, ok in [(1000, 200, True), (500, 0, False)]:
        LlmCall.objects.create(
            workspace=alice.workspace, purpose="extract", model="m",
            prompt_tokens=prompt, completion_tokens=completion,
            cost=Decimal("0.0015") if ok else Decimal(0), ok=ok,
        )  # fmt: skip
    LlmCall.objects.create(
        workspace=alice.workspace, purpose="answer", model="m", prompt_tokens=300,
        completion_tokens=100, cost=Decimal("0.5"),
    )  # fmt: skip
    text = scrape()
    assert value(text, "graphloom_llm_tokens_total", purpose="extract", kind="prompt") == 1500
    assert value(text, "graphloom_llm_tokens_total", purpose="extract", kind="completion") == 200
    assert value(text, "graphloom_llm_cost_usd_total", purpose="extract") == pytest.approx(0.0015)
    assert value(text, "graphloom_llm_cost_usd_total", purpose="answer") == pytest.approx(0.5)
    assert value(text, "graphloom_llm_calls_total", purpose="extract", ok="false") == 1
    assert value(text, "graphloom_llm_calls_total", purpose="extract", ok="true") == 1


def test_search_and_graph_latencies_are_observed(metrics_on, alice):
    built = make_graph(
        alice.workspace,
        entities={"Harbour Crane": "concept", "Port Authority": "organization"},
        relations=[("Port Authority", "Harbour Crane", "part_of")],
    )
    before = scrape()
    searches = value(before, "graphloom_search_duration_seconds_count") or 0
    paths = value(before, "graphloom_graph_query_duration_seconds_count", query="path") or 0
    bulks = value(before, "graphloom_graph_query_duration_seconds_count", query="bulk") or 0
    hoods = value(before, "graphloom_graph_query_duration_seconds_count", query="neighbourhood")

    client = alice.client()
    found = client.post(
        "/api/v1/workspaces/acme/search",
        {"query": "who runs the harbour crane?"},
        content_type="application/json",
    )
    assert found.status_code == 200
    crane, port = built.entities["Harbour Crane"].pk, built.entities["Port Authority"].pk
    assert client.get(f"/api/v1/workspaces/acme/path?from={port}&to={crane}").status_code == 200
    assert client.get("/api/v1/workspaces/acme/graph").status_code == 200
    hood = client.get(f"/api/v1/workspaces/acme/entities/{crane}/neighborhood")
    assert hood.status_code == 200

    text = scrape()
    assert value(text, "graphloom_search_duration_seconds_count") == searches + 1
    took = value(text, "graphloom_search_duration_seconds_sum")
    assert took is not None and took > 0
    assert value(text, "graphloom_graph_query_duration_seconds_count", query="path") == paths + 1
    assert value(text, "graphloom_graph_query_duration_seconds_count", query="bulk") == bulks + 1
    assert (
        value(text, "graphloom_graph_query_duration_seconds_count", query="neighbourhood")
        == (hoods or 0) + 1
    )
