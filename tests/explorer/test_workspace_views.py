"""The workspace deletion page: admins only, and only after typing the slug."""

from __future__ import annotations

import pytest
from django.test import Client

from workspaces.models import Role, Workspace

pytestmark = pytest.mark.django_db

URL = "/workspaces/acme/delete/"


def browser(member) -> Client:
    client = Client()
    client.force_login(member.user)
    return client


def test_the_page_asks_for_the_slug_and_deletes_only_when_it_is_typed(make_member):
    admin = make_member("alice", workspace="acme", role=Role.ADMIN)
    client = browser(admin)
    page = client.get(URL)
    assert page.status_code == 200
    assert b'name="confirm"' in page.content

    refused = client.post(URL, {"confirm": "acm"})
    assert refused.status_code == 422
    assert b"Type the workspace" in refused.content
    assert Workspace.objects.get(slug="acme").deletion_requested_at is None

    done = client.post(URL, {"confirm": "acme"})
    assert done.status_code == 302
    assert Workspace.objects.get(slug="acme").state == "deleting"
    assert client.get(URL).status_code == 404


def test_members_below_admin_are_refused_and_strangers_see_nothing(make_member):
    make_member("alice", workspace="acme", role=Role.ADMIN)
    editor = make_member("erin", workspace="acme", role=Role.EDITOR)
    stranger = make_member("bob", workspace="globex", role=Role.ADMIN)
    assert browser(editor).post(URL, {"confirm": "acme"}).status_code == 403
    assert browser(stranger).post(URL, {"confirm": "acme"}).status_code == 404
    assert Workspace.objects.get(slug="acme").deletion_requested_at is None


def test_the_workspace_name_is_escaped_on_the_page(make_member):
    admin = make_member("alice", workspace="acme", role=Role.ADMIN)
    Workspace.objects.filter(slug="acme").update(name="<script>alert(1)</script>")
    page = browser(admin).get(URL)
    assert b"<script>alert(1)</script>" not in page.content
    assert b"&lt;script&gt;" in page.content


def test_the_sources_page_links_admins_to_the_deletion_page_and_nobody_else(make_member):
    admin = make_member("alice", workspace="acme", role=Role.ADMIN)
    editor = make_member("bob", workspace="acme", role=Role.EDITOR)
    page = browser(admin).get("/?ws=acme")
    assert page.status_code == 200
    assert f'id="workspace-delete" href="{URL}"'.encode() in page.content
    page = browser(editor).get("/?ws=acme")
    assert page.status_code == 200
    assert b"workspace-delete" not in page.content
