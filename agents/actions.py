"""The one write of this app: the call log (every tool call and resource read, with its
token, tool, duration and outcome)."""

from __future__ import annotations

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
