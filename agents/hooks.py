"""What the agents app plugs into the seams of the apps below it: each function here is
named by a dotted path in settings (config/settings/base.py), which the lower app loads
lazily, never importing agents.

- UPKEEP_JOBS (system/upkeep.py): `prune_agent_calls` (`agent_calls`), the MCP call log
  kept to AGENT_CALLS_KEEP_DAYS days.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from agents.actions import do_prune_agent_calls
from system.upkeep import JobOutcome
from workspaces.models import Workspace


def prune_agent_calls() -> JobOutcome:
    """Delete the agent calls older than AGENT_CALLS_KEEP_DAYS (0 keeps them all)."""
    days = settings.AGENT_CALLS_KEEP_DAYS
    if days <= 0:
        return JobOutcome.skipped("AGENT_CALLS_KEEP_DAYS is 0: the call log is kept whole")
    before = timezone.now() - timedelta(days=days)
    per_workspace = {
        workspace.slug: count
        for workspace in Workspace.objects.order_by("pk")
        if (count := do_prune_agent_calls(workspace=workspace, before=before))
    }
    deleted = sum(per_workspace.values())
    return JobOutcome.ok(
        f"{deleted} agent call{'s' if deleted != 1 else ''} older than {days} days deleted",
        {"deleted": per_workspace, "keep_days": days},
    )
