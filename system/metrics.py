"""Prometheus metrics: what an operator graphs and alerts on (docs/operations.md, "Metrics").

Two kinds of figures, because two kinds of truth exist:

* counted at scrape time from the database, so every web process answers the same and
  nothing is lost when a process restarts: the task queue (django-tasks-db rows: depth,
  durations, failures by task) and whatever the apps above register in
  METRICS_COLLECTORS (LLM tokens and cost come from `knowledge`, which `system` never
  imports);
* observed in-process as requests are served: search and graph query latencies. Each web
  process keeps its own; gunicorn started with config/gunicorn.py sets PROMETHEUS_MULTIPROC_DIR
  for its workers (the client library then shares them through files), without it each
  scrape sees one worker.

Labels stay bounded: task paths, LLM purposes, query kinds. Never a workspace, a query or
an id.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta
from typing import Any, cast

from django.conf import settings
from django.db.models import Count, DurationField, ExpressionWrapper, F, Min, Q, Sum
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from system.loading import import_paths
from system.models import ScheduledJob

# Seconds; searches run tens to hundreds of milliseconds, graph reads up to a few seconds.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# Seconds; a task is a group of documents (seconds) up to a whole crawl or extraction (hours).
TASK_DURATION_BUCKETS = (0.1, 0.5, 1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 3600.0, 14400.0)

SEARCH_SECONDS = Histogram(
    "graphloom_search_duration_seconds",
    "Hybrid searches served by the API, by the time the search took.",
    buckets=LATENCY_BUCKETS,
)
GRAPH_QUERY_SECONDS = Histogram(
    "graphloom_graph_query_duration_seconds",
    "Graph reads served by the API (path, subgraph, bulk), by the time they took.",
    ["query"],
    buckets=LATENCY_BUCKETS,
)


def observe_search(seconds: float) -> None:
    SEARCH_SECONDS.observe(max(seconds, 0.0))


def observe_graph_query(query: str, seconds: float) -> None:
    """`query` is one of a few fixed names chosen by the caller, never user input."""
    GRAPH_QUERY_SECONDS.labels(query=query).observe(max(seconds, 0.0))


# --- counted from the database at scrape time -----------------------------------------


def _duration() -> ExpressionWrapper:
    return ExpressionWrapper(F("finished_at") - F("started_at"), output_field=DurationField())


def queue_metrics() -> Iterator[Metric]:
    """Tasks waiting and running by task path, and how long the oldest has waited."""
    depth = GaugeMetricFamily(
        "graphloom_tasks_in_queue",
        "Tasks waiting (ready) or running, by task.",
        labels=["task", "status"],
    )
    oldest = GaugeMetricFamily(
        "graphloom_task_oldest_ready_age_seconds",
        "How long the oldest task still waiting for a worker has waited, by task.",
        labels=["task"],
    )
    now = timezone.now()
    rows = (
        DBTaskResult.objects.filter(status__in=["READY", "RUNNING"])
        .values("task_path", "status")
        .annotate(count=Count("id"), first=Min("enqueued_at"))
        .order_by("task_path", "status")
    )
    for row in rows:
        depth.add_metric([row["task_path"], row["status"].lower()], row["count"])
        if row["status"] == "READY":
            oldest.add_metric([row["task_path"]], (now - row["first"]).total_seconds())
    yield depth
    yield oldest


def finished_task_metrics() -> Iterator[Metric]:
    """Durations of finished tasks (a histogram over every result row kept) and failures.

    Counted from the rows, so pruning old results (django-tasks-db's
    `prune_db_task_results`) lowers them: Prometheus reads that as a counter reset."""
    bounds = [timedelta(seconds=b) for b in TASK_DURATION_BUCKETS]
    buckets = {
        f"le{i}": Count("id", filter=Q(duration__lte=bound)) for i, bound in enumerate(bounds)
    }
    rows = cast(
        "Iterable[dict[str, Any]]",
        DBTaskResult.objects.filter(
            status__in=["SUCCESSFUL", "FAILED"], started_at__isnull=False, finished_at__isnull=False
        )
        .annotate(duration=_duration())
        .values("task_path")
        .annotate(
            count=Count("id"),
            total=Sum("duration"),
            failed=Count("id", filter=Q(status="FAILED")),
            **buckets,
        )
        .order_by("task_path"),
    )
    durations = HistogramMetricFamily(
        "graphloom_task_duration_seconds",
        "Finished tasks (successful or failed) by how long they ran, by task.",
        labels=["task"],
    )
    failures = CounterMetricFamily(
        "graphloom_task_failures",
        "Tasks that finished with an exception, by task.",
        labels=["task"],
    )
    for row in rows:
        cumulative = [
            (_bucket_label(bound), row[f"le{i}"]) for i, bound in enumerate(TASK_DURATION_BUCKETS)
        ]
        cumulative.append(("+Inf", row["count"]))
        total = row["total"].total_seconds() if row["total"] else 0.0
        durations.add_metric([row["task_path"]], cumulative, sum_value=max(total, 0.0))
        failures.add_metric([row["task_path"]], row["failed"])
    yield durations
    yield failures


def upkeep_metrics() -> Iterator[Metric]:
    """The scheduled upkeep jobs (system/upkeep.py): when each last run started and how it
    went, so an alert can fire on a job that failed or stopped running."""
    started = GaugeMetricFamily(
        "graphloom_upkeep_last_run_timestamp_seconds",
        "When the last run of each scheduled upkeep job started (Unix time).",
        labels=["job"],
    )
    outcome = GaugeMetricFamily(
        "graphloom_upkeep_last_outcome",
        "1 for the outcome (ok, failed, skipped) of each upkeep job's last run.",
        labels=["job", "outcome"],
    )
    for job in ScheduledJob.objects.order_by("name"):
        if job.last_started_at is None:
            continue
        started.add_metric([job.name], job.last_started_at.timestamp())
        if job.last_outcome:
            outcome.add_metric([job.name, job.last_outcome], 1)
    yield started
    yield outcome


def _bucket_label(bound: float) -> str:
    return repr(float(bound))


class DatabaseCollector(Collector):
    """Runs the queue queries and each METRICS_COLLECTORS function at every scrape."""

    def collect(self) -> Iterable[Metric]:
        yield from queue_metrics()
        yield from finished_task_metrics()
        yield from upkeep_metrics()
        functions: tuple[Callable[[], Iterable[Metric]], ...] = import_paths(
            settings.METRICS_COLLECTORS
        )
        for function in functions:
            yield from function()


def render_metrics() -> bytes:
    """The exposition text: this process's (or, in multiprocess mode, every process's)
    observed metrics, then the figures counted from the database."""
    database = CollectorRegistry(auto_describe=False)
    database.register(DatabaseCollector())
    return _process_metrics() + generate_latest(database)


def _process_metrics() -> bytes:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        shared = CollectorRegistry()
        multiprocess.MultiProcessCollector(shared)
        return generate_latest(shared)
    return generate_latest(REGISTRY)
