"""The writes of this app: the call log (every tool call and resource read, with its
token, tool, duration and outcome), and its pruning."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from agents.models import AgentCall
from workspaces.models import ApiToken, Workspace

_ERROR_CHARS = 500


def do_record_call(
    *,
    workspace: Workspace,
    token: ApiToken | None,
    tool: str,
    transport: str,
    duration_ms: float,
    ok: bool,
    error: str = "",
) -> AgentCall:
    return AgentCall.objects.create(
        workspace=workspace,
        token=token,
        tool=tool[:100],
        transport=transport[:16],
        duration_ms=round(duration_ms, 3),
        ok=ok,
        error=error[:_ERROR_CHARS],
    )


def do_prune_agent_calls(*, workspace: Workspace, before: datetime, batch_size: int = 5000) -> int:
    """Delete the workspace's calls logged before `before`, `batch_size` rows a transaction
    (a long log never holds one giant lock; the (workspace, created_at) index finds them);
    returns how many went. The rate limit counts the last minute only, so older rows serve
    nobody but the log's reader."""
    deleted = 0
    while True:
        with transaction.atomic():
            ids = list(
                AgentCall.objects.filter(workspace=workspace, created_at__lt=before)
                .order_by("created_at")
                .values_list("pk", flat=True)[:batch_size]
            )
            if not ids:
                return deleted
            deleted += AgentCall.objects.filter(pk__in=ids).delete()[0]
