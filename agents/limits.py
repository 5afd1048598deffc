"""The per-token rate limit: MCP_RATE_PER_MINUTE tool calls and resource reads in any
sliding minute. Counted from the call log in the database (agents/models.py), which every
gunicorn worker and every stdio process shares; the process-local cache would let each
worker grant the whole allowance again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from agents.models import AgentCall
from workspaces.models import ApiToken

WINDOW = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class RateVerdict:
    allowed: bool
    limit: int
    used: int
    retry_after_seconds: int

    @property
    def message(self) -> str:
        return (
            f"Rate limit exceeded: this token may make {self.limit} tool calls or resource "
            f"reads per minute (MCP_RATE_PER_MINUTE). Retry in {self.retry_after_seconds} s."
        )


def check_rate(token: ApiToken) -> RateVerdict:
    """Whether `token` may make one more call now (an index range scan of its last minute)."""
    limit = settings.MCP_RATE_PER_MINUTE
    if limit <= 0:  # no limit
        return RateVerdict(allowed=True, limit=0, used=0, retry_after_seconds=0)
    since = timezone.now() - WINDOW
    recent = AgentCall.objects.filter(token=token, created_at__gte=since)
    used = recent.count()
    if used < limit:
        return RateVerdict(allowed=True, limit=limit, used=used, retry_after_seconds=0)
    # The allowance comes back when the oldest call counted leaves the window.
    oldest = recent.order_by("created_at").values_list("created_at", flat=True)[used - limit]
    wait = (oldest + WINDOW - timezone.now()).total_seconds()
    return RateVerdict(
        allowed=False, limit=limit, used=used, retry_after_seconds=max(1, int(wait) + 1)
    )
