"""`GET /api/v1/health`: is everything Graphloom needs alive? Public, and never a secret."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from ninja import Router, Status

from system.schemas import HealthOut
from system.selectors import (
    get_database_status,
    get_embedding_status,
    get_worker_status,
    llm_is_configured,
)

router = Router(tags=["system"])


@router.get("/health", response={200: HealthOut, 503: HealthOut}, auth=None, summary="Health")
def health(request: HttpRequest) -> Status[dict[str, object]]:
    """200 when the database answers (status "degraded" if a worker or model is missing);
    503 when the database does not."""
    database = get_database_status()
    worker = get_worker_status() if database.ok else None
    embedding = get_embedding_status()
    configured = llm_is_configured()
    if not database.ok:
        status = "error"
    elif worker is not None and worker.status == "ok" and embedding.status == "available":
        status = "ok"
    else:
        status = "degraded"
    body: dict[str, object] = {
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
            "status": worker.status if worker else "missing",
            "heartbeat_age_seconds": worker.heartbeat_age_seconds if worker else None,
            "live_workers": worker.live_workers if worker else 0,
        },
        "embedding": {
            "model": embedding.model,
            "status": embedding.status,
            "detail": embedding.detail,
        },
        "llm": {"configured": configured, "model": settings.LLM_MODEL if configured else None},
    }
    return Status(200 if database.ok else 503, body)
