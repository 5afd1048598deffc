"""The call log in the admin: listed, never added or edited by hand."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client

from agents.actions import do_record_call


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
