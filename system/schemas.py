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
