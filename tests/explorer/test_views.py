"""First-run page, sign-in and the dashboard."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from workspaces.models import Membership, Role, Workspace

pytestmark = pytest.mark.django_db

SETUP = {
    "username": "ada",
    "email": "ada@example.org",
    "password": "correct horse battery",
    "password_again": "correct horse battery",
    "workspace_name": "Research Lab",
    "workspace_slug": "",
}


def test_home_leads_to_first_run_until_an_account_exists():
    response = Client().get("/")
    assert response.status_code == 302
    assert response["Location"] == "/setup/"
    page = Client().get("/setup/")
    assert page.status_code == 200
    assert b"Create account and workspace" in page.content


def test_first_run_creates_admin_and_workspace_signs_in_and_then_disappears():
    client = Client()
    response = client.post("/setup/", SETUP)
    assert response.status_code == 302
    assert response["Location"] == "/"
    user = User.objects.get()
    assert user.username == "ada"
    assert user.is_superuser
    assert user.is_staff
    assert user.check_password("correct horse battery")
    workspace = Workspace.objects.get()
    assert (workspace.slug, workspace.name) == ("research-lab", "Research Lab")
    assert Membership.objects.get(user=user, workspace=workspace).role == Role.ADMIN
    dashboard = client.get("/")
    assert dashboard.status_code == 200
    assert b"Research Lab" in dashboard.content
    # Gone for everyone afterwards, signed in or not, GET or POST.
    assert client.get("/setup/").status_code == 404
    assert Client().get("/setup/").status_code == 404
    assert Client().post("/setup/", {**SETUP, "username": "mallory"}).status_code == 404
    assert User.objects.count() == 1


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"password_again": "something else entirely"}, "password_again"),
        ({"password": "123", "password_again": "123"}, "password"),
        ({"username": "bad name!"}, "username"),
        ({"workspace_slug": "no spaces please"}, "workspace_slug"),
    ],
)
def test_first_run_rejects_bad_input_and_creates_nothing(change, field):
    response = Client().post("/setup/", {**SETUP, **change})
    assert response.status_code == 200
    assert response.context["form"].errors[field]
    assert not User.objects.exists()
    assert not Workspace.objects.exists()


def test_dashboard_requires_sign_in_and_escapes_workspace_names(alice):
    alice.workspace.name = '<img src=x onerror="alert(1)">'
    alice.workspace.save()
    assert Client().get("/")["Location"].startswith("/login/")
    client = Client()
    assert (
        client.post("/login/", {"username": "alice", "password": "not-used-here-1"}).status_code
        == 302
    )
    page = client.get("/").content.decode()
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
    assert '<img src=x onerror="alert(1)">' not in page


def test_pages_carry_a_content_security_policy_without_inline_scripts():
    response = Client().get("/setup/")
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert b"<script>" not in response.content


def test_sign_out_ends_the_session(alice):
    client = Client()
    client.force_login(alice.user)
    assert client.get("/").status_code == 200
    assert client.post("/logout/").status_code == 302
    assert client.get("/")["Location"].startswith("/login/")
