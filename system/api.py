"""`GET /api/v1/health`: is everything Graphloom needs alive? Public, and never a secret."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router, Status

from system.schemas import HealthOut
from system.selectors import get_health_report

router = Router(tags=["system"])


@router.get("/health", response={200: HealthOut, 503: HealthOut}, auth=None, summary="Health")
def health(request: HttpRequest) -> Status[dict[str, Any]]:
    """200 when the database answers (status "degraded" if a worker or the embedding model is
    missing); 503 when it does not."""
    database_ok, report = get_health_report()
    return Status(200 if database_ok else 503, report)
