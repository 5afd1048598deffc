"""The API's auth, roles, workspace isolation and error shape, over real HTTP handling."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from workspaces.actions.tokens import do_revoke_api_token
from workspaces.models import ApiToken, Role


def error_of(response) -> dict:
    body = response.json()
    assert set(body) == {"error"}, body
    assert {"code", "message"} <= set(body["error"])
    return body["error"]


def patch(client: Client, url: str, data: dict, **kwargs):
    return client.patch(url, json.dumps(data), content_type="application/json", **kwargs)


def post(client: Client, url: str, data: dict, **kwargs):
    return client.post(url, json.dumps(data), content_type="application/json", **kwargs)


def test_member_reads_own_workspace(alice):
    response = alice.client().get("/api/v1/workspaces/acme")
    assert response.status_code == 200
    assert response.json()["slug"] == "acme"
    assert response.json()["role"] == "admin"


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/workspaces/{ws}",
        "/api/v1/workspaces/{ws}/members",
        "/api/v1/workspaces/{ws}/tokens",
    ],
)
def test_another_workspace_answers_404_exactly_like_a_missing_one(alice, bob, path):
    foreign = alice.client().get(path.format(ws="globex"))
    missing = alice.client().get(path.format(ws="no-such-workspace"))
    assert foreign.status_code == missing.status_code == 404
    assert error_of(foreign)["code"] == error_of(missing)["code"] == "not_found"
    assert error_of(foreign)["message"].replace("globex", "X") == error_of(missing)[
        "message"
    ].replace("no-such-workspace", "X")


def test_token_of_another_workspace_cannot_be_revoked_through_own_workspace(alice, bob):
    response = alice.client().delete(f"/api/v1/workspaces/acme/tokens/{bob.token.pk}")
    assert response.status_code == 404
    assert ApiToken.objects.get(pk=bob.token.pk).revoked_at is None


def test_workspace_list_contains_only_the_callers_workspaces(alice, bob):
    items = alice.client().get("/api/v1/workspaces").json()["items"]
    assert [w["slug"] for w in items] == ["acme"]


@pytest.mark.parametrize("role", [Role.VIEWER, Role.EDITOR])
def test_non_admins_cannot_call_admin_endpoints(make_member, role):
    member = make_member("vera", role=role)
    client = member.client()
    renamed = patch(client, "/api/v1/workspaces/acme", {"name": "Renamed"})
    added = post(client, "/api/v1/workspaces/acme/members", {"username": "vera", "role": "admin"})
    assert renamed.status_code == added.status_code == 403
    assert error_of(renamed)["code"] == "forbidden"
    member.workspace.refresh_from_db()
    assert member.workspace.name == "Acme"


def test_viewer_reads_but_cannot_write(make_member):
    viewer = make_member("val", role=Role.VIEWER)
    client = viewer.client()
    assert client.get("/api/v1/workspaces/acme").status_code == 200
    assert client.get("/api/v1/workspaces/acme/members").status_code == 200
    assert patch(client, "/api/v1/workspaces/acme", {"description": "x"}).status_code == 403


def test_admin_renames_and_adds_members(alice, make_member):
    make_member("zed", workspace="other")
    client = alice.client()
    response = patch(client, "/api/v1/workspaces/acme", {"name": "Acme Research"})
    assert response.status_code == 200
    assert response.json()["name"] == "Acme Research"
    added = post(client, "/api/v1/workspaces/acme/members", {"username": "zed", "role": "editor"})
    assert added.status_code == 200
    assert added.json() == {**added.json(), "username": "zed", "role": "editor"}


@pytest.mark.parametrize(
    "header",
    [None, "Bearer nonsense", "Bearer glm_000000000000_wrongsecret", "Basic YWxpY2U6cHc="],
)
def test_missing_or_invalid_credentials_get_401(alice, header):
    headers = {"Authorization": header} if header else {}
    response = Client(headers=headers).get("/api/v1/workspaces/acme")
    assert response.status_code == 401
    assert error_of(response)["code"] == "unauthenticated"
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_revoked_token_gets_401(alice):
    assert alice.client().get("/api/v1/workspaces/acme").status_code == 200
    do_revoke_api_token(token=alice.token)
    response = alice.client().get("/api/v1/workspaces/acme")
    assert response.status_code == 401
    assert "revoked" in error_of(response)["message"]


def test_session_writes_need_the_csrf_token(alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice.user)
    assert client.get("/api/v1/workspaces/acme").status_code == 200
    refused = patch(client, "/api/v1/workspaces/acme", {"name": "No CSRF"})
    assert refused.status_code == 403
    assert "CSRF" in error_of(refused)["message"]
    client.get("/")  # a page with a form sets the csrftoken cookie, as in the browser
    token = client.cookies["csrftoken"].value
    accepted = patch(
        client, "/api/v1/workspaces/acme", {"name": "With CSRF"}, headers={"X-CSRFToken": token}
    )
    assert accepted.status_code == 200


def test_token_is_shown_once_and_then_authenticates(alice):
    session = Client()
    session.force_login(alice.user)
    created = post(session, "/api/v1/workspaces/acme/tokens", {"name": "agent"})
    assert created.status_code == 201
    plaintext = created.json()["token"]
    listed = session.get("/api/v1/workspaces/acme/tokens").json()["items"]
    assert all("token" not in item for item in listed)
    assert plaintext not in json.dumps(listed)
    me = Client(headers={"Authorization": f"Bearer {plaintext}"}).get("/api/v1/me").json()
    assert me["username"] == "alice"
    assert me["token_workspace"] == "acme"


def test_tokens_cannot_mint_tokens(alice):
    response = post(alice.client(), "/api/v1/workspaces/acme/tokens", {"name": "child"})
    assert response.status_code == 403


def test_members_can_revoke_only_their_own_tokens_unless_admin(alice, make_member):
    ed = make_member("ed", role=Role.EDITOR)
    assert ed.client().delete(f"/api/v1/workspaces/acme/tokens/{alice.token.pk}").status_code == 403
    assert alice.client().delete(f"/api/v1/workspaces/acme/tokens/{ed.token.pk}").status_code == 200
    assert ApiToken.objects.get(pk=ed.token.pk).revoked_at is not None


def test_validation_errors_name_the_field(alice):
    session = Client()
    session.force_login(alice.user)
    alice.user.is_staff = True
    alice.user.save()
    response = post(session, "/api/v1/workspaces", {"name": "no slug given"})
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "invalid"
    assert "slug" in error["message"]


def test_only_staff_sessions_create_workspaces(alice):
    assert post(alice.client(), "/api/v1/workspaces", {"slug": "new"}).status_code == 403
    session = Client()
    session.force_login(alice.user)
    assert post(session, "/api/v1/workspaces", {"slug": "new"}).status_code == 403
    alice.user.is_staff = True
    alice.user.save()
    created = post(session, "/api/v1/workspaces", {"slug": "new", "name": "New"})
    assert created.status_code == 201
    assert created.json()["role"] == "admin"
    duplicate = post(session, "/api/v1/workspaces", {"slug": "new"})
    assert duplicate.status_code == 409
    assert error_of(duplicate)["code"] == "conflict"


def test_openapi_schema_and_docs_are_served(alice):
    schema = Client().get("/api/v1/openapi.json")
    assert schema.status_code == 200
    assert "/api/v1/workspaces/{slug}" in schema.json()["paths"]
    assert Client().get("/api/v1/docs").status_code == 200
