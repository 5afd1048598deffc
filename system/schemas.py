"""API schemas of the system app."""

from __future__ import annotations

from ninja import Field, Schema


class DatabaseHealth(Schema):
    ok: bool
    embedded: bool
    server_version: str | None
    error: str | None


class PgvectorHealth(Schema):
    installed: bool
    version: str | None


class WorkerHealth(Schema):
    status: str = Field(..., description="ok | stale | missing")
    heartbeat_age_seconds: float | None
    live_workers: int


class EmbeddingHealth(Schema):
    model: str
    status: str = Field(..., description="available | missing")
    detail: str


class LlmHealth(Schema):
    configured: bool
    model: str | None


class UpkeepJobHealth(Schema):
    enabled: bool
    every_seconds: int
    last_run: str | None = Field(..., description="when the last run started (ISO 8601)")
    last_finished: str | None
    next_run: str | None = Field(..., description="when the job is due next; null when off")
    running: bool
    outcome: str | None = Field(..., description="ok | failed | skipped; null before a run")
    message: str


class HealthOut(Schema):
    status: str = Field(..., description="ok | degraded | error")
    database: DatabaseHealth
    pgvector: PgvectorHealth
    worker: WorkerHealth
    embedding: EmbeddingHealth
    llm: LlmHealth
    counts: dict[str, int] = Field(
        default_factory=dict,
        description="what the apps count (HEALTH_COUNTS): entities_without_vector and "
        "entities_stale_vector (a vector from another model than the configured one), both "
        "filled in by `manage.py backfill_embeddings`; empty without a database",
    )
    upkeep: dict[str, UpkeepJobHealth] = Field(
        default_factory=dict,
        description="the scheduled upkeep jobs (UPKEEP_JOBS) by name: llm_review, "
        "communities, backfill, prune_report; empty without a database",
    )
