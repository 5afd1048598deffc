"""`manage.py workspace ...`: the scripted path to workspaces, members and tokens."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from workspaces.models import ApiToken, Membership

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command("workspace", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_create_list_add_member_and_issue_a_working_token():
    User.objects.create_user("owner")
    run("create", "acme", "--name", "Acme Corp", "--owner", "owner")
    run("add-member", "--workspace", "acme", "newbie", "--role", "editor", "--create-user")
    listed = json.loads(run("list", "--json"))
    assert listed == [{"slug": "acme", "name": "Acme Corp", "members": 2}]
    assert Membership.objects.get(user__username="newbie").role == "editor"
    assert not User.objects.get(username="newbie").has_usable_password()

    plaintext = run("token", "--workspace", "acme", "newbie", "--name", "script").strip()
    response = Client(headers={"Authorization": f"Bearer {plaintext}"}).get(
        "/api/v1/workspaces/acme"
    )
    assert response.status_code == 200
    assert response.json()["role"] == "editor"

    token_id = json.loads(run("token", "--workspace", "acme", "--list", "--json"))[0]["id"]
    run("token", "--workspace", "acme", "--revoke", str(token_id))
    assert ApiToken.objects.get(pk=token_id).revoked_at is not None
    assert (
        Client(headers={"Authorization": f"Bearer {plaintext}"}).get("/api/v1/me").status_code
        == 401
    )


def test_failures_exit_1_and_usage_errors_exit_2():
    with pytest.raises(CommandError) as missing:
        run("add-member", "--workspace", "nope", "someone")
    assert missing.value.returncode == 1
    assert "not found" in str(missing.value)
    with pytest.raises(CommandError) as bad_slug:
        run("create", "not a slug")
    assert bad_slug.value.returncode == 2
    run("create", "acme")
    with pytest.raises(CommandError) as no_name:
        run("token", "--workspace", "acme", "someone")
    assert no_name.value.returncode == 2


def test_token_for_a_non_member_is_refused():
    User.objects.create_user("outsider")
    run("create", "acme")
    with pytest.raises(CommandError, match="not a member"):
        run("token", "--workspace", "acme", "outsider", "--name", "x")
    assert not ApiToken.objects.exists()
