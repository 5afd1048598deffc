"""The call log: read-only in the admin, kept AGENT_CALLS_KEEP_DAYS days by its upkeep job."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from agents.actions import do_record_call
from agents.hooks import prune_agent_calls
from agents.models import AgentCall
from workspaces.actions.workspaces import do_create_workspace


def test_the_call_log_is_read_only_in_the_admin(alice):
    call = do_record_call(
        workspace=alice.workspace,
        token=alice.token,
        tool="search",
        transport="http",
        duration_ms=12.5,
        ok=False,
        error="x" * 900,
    )
    assert len(call.error) == 500  # bounded
    admin = User.objects.create_superuser("root", password="not-used-here-1")
    client = Client()
    client.force_login(admin)
    listing = client.get("/admin/agents/agentcall/")
    assert listing.status_code == 200
    assert "search" in listing.content.decode()
    assert client.get("/admin/agents/agentcall/add/").status_code == 403
    change = client.post(f"/admin/agents/agentcall/{call.pk}/change/", {"tool": "other"})
    assert change.status_code in (200, 403)
    call.refresh_from_db()
    assert call.tool == "search"


def log_call(workspace, *, days_ago: float, tool: str) -> AgentCall:
    call = do_record_call(
        workspace=workspace, token=None, tool=tool, transport="stdio", duration_ms=1.0, ok=True
    )
    # created_at is set on insert: backdate it as if the call was made `days_ago`.
    AgentCall.objects.filter(pk=call.pk).update(
        created_at=timezone.now() - timedelta(days=days_ago)
    )
    return call


def test_the_upkeep_job_deletes_calls_older_than_the_kept_days_in_every_workspace(alice, settings):
    settings.AGENT_CALLS_KEEP_DAYS = 30
    other = do_create_workspace(slug="other")
    for workspace in (alice.workspace, other):
        log_call(workspace, days_ago=45, tool="old")
        log_call(workspace, days_ago=29, tool="recent")
    log_call(other, days_ago=400, tool="ancient")

    outcome = prune_agent_calls()

    assert outcome.kind == "ok"
    assert outcome.message == "3 agent calls older than 30 days deleted"
    assert outcome.details["deleted"] == {alice.workspace.slug: 1, "other": 2}
    assert sorted(AgentCall.objects.values_list("workspace__slug", "tool")) == [
        (alice.workspace.slug, "recent"),
        ("other", "recent"),
    ]
    assert prune_agent_calls().message == "0 agent calls older than 30 days deleted"


def test_with_zero_kept_days_the_log_is_kept_whole(alice, settings):
    settings.AGENT_CALLS_KEEP_DAYS = 0
    log_call(alice.workspace, days_ago=4000, tool="ancient")
    assert prune_agent_calls().kind == "skipped"
    assert AgentCall.objects.count() == 1
