"""Account screens: API tokens (create shown once, list, revoke), the workspace switcher,
and the accessibility of the sign-in and first-run forms."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.support import signed_in
from workspaces.actions.workspaces import do_set_membership
from workspaces.models import ApiToken, Role
from workspaces.tokens import hash_token

pytestmark = pytest.mark.django_db

SECRET = re.compile(r"glm_[0-9a-f]{12}_[A-Za-z0-9_-]{20,}")
HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)">'


def input_tag(html: str, name: str) -> str:
    match = re.search(rf'<input[^>]*\bname="{name}"[^>]*>', html)
    assert match, f"no input named {name!r}"
    return match.group(0)


def revoke_url(token: ApiToken) -> str:
    return f"/account/tokens/{token.pk}/revoke/"


# --- API tokens -----------------------------------------------------------------------


def test_a_viewer_creates_a_token_whose_secret_is_shown_once_and_authenticates(make_member):
    vera = make_member("vera", role=Role.VIEWER)
    client = signed_in(vera)

    response = client.post("/account/tokens/", {"name": "research-agent"})

    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    page = response.content.decode()
    secrets = set(SECRET.findall(page))
    assert len(secrets) == 1, "exactly the new token's secret, nothing else"
    (plaintext,) = secrets
    assert "will not be shown again" in page
    assert 'data-copy="new-token"' in page
    token = ApiToken.objects.get(name="research-agent")
    assert (token.user, token.workspace) == (vera.user, vera.workspace)
    assert token.secret_hash == hash_token(plaintext)
    assert plaintext not in str(dict(client.session.items()))
    me = Client(headers={"Authorization": f"Bearer {plaintext}"}).get("/api/v1/me")
    assert me.status_code == 200
    assert (me.json()["username"], me.json()["token_workspace"]) == ("vera", "acme")

    again = client.get("/account/tokens/")
    assert again.status_code == 200
    assert "no-store" in again["Cache-Control"]
    assert "research-agent" in again.content.decode()
    assert not SECRET.search(again.content.decode())


def test_a_blank_token_name_is_refused_with_a_message_and_creates_nothing(alice):
    response = signed_in(alice).post("/account/tokens/", {"name": "   "})
    assert response.status_code == 200
    page = response.content.decode()
    assert 'role="alert"' in page
    assert 'aria-invalid="true"' in input_tag(page, "name")
    assert "autofocus" in input_tag(page, "name")
    assert not SECRET.search(page)
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["alice-token"]


def test_the_token_page_needs_a_signed_in_member(alice):
    assert Client().get("/account/tokens/")["Location"].startswith("/login/")
    assert Client().post("/account/tokens/", {"name": "x"})["Location"].startswith("/login/")
    assert ApiToken.objects.count() == 1


def test_members_list_their_own_tokens_and_admins_list_everyones(alice, make_member):
    eve = make_member("eve", role=Role.EDITOR)
    own = signed_in(eve).get("/account/tokens/").content.decode()
    assert "eve-token" in own
    assert "alice-token" not in own
    everyone = signed_in(alice).get("/account/tokens/").content.decode()
    assert "eve-token" in everyone and "alice-token" in everyone
    assert "Owner" in everyone


def test_active_tokens_are_listed_before_revoked_ones(alice):
    client = signed_in(alice)
    client.post("/account/tokens/", {"name": "newer"})
    client.post(revoke_url(ApiToken.objects.get(name="newer")))
    client.post("/account/tokens/", {"name": "newest"})
    listed = client.get("/account/tokens/").context["tokens"]
    assert [t.name for t in listed] == ["newest", "alice-token", "newer"]


def test_revoking_asks_first_then_the_token_gets_401(make_member):
    eve = make_member("eve", role=Role.EDITOR)
    client = signed_in(eve)

    confirm = client.get(revoke_url(eve.token))
    assert confirm.status_code == 200
    assert "Revoke token" in confirm.content.decode()
    assert eve.client().get("/api/v1/me").status_code == 200, "asking revokes nothing"

    done = client.post(revoke_url(eve.token) + "?ws=acme")
    assert done.status_code == 302
    assert done["Location"] == "/account/tokens/?ws=acme"
    eve.token.refresh_from_db()
    assert eve.token.revoked_at is not None
    assert eve.client().get("/api/v1/me").status_code == 401
    listed = client.get(done["Location"]).content.decode()
    assert "is revoked" in listed
    assert "Revoked" in listed
    # Revoking twice keeps the first time.
    first = eve.token.revoked_at
    assert client.post(revoke_url(eve.token)).status_code == 302
    eve.token.refresh_from_db()
    assert eve.token.revoked_at == first


def test_a_member_cannot_revoke_another_members_token_but_an_admin_can(alice, make_member):
    eve = make_member("eve", role=Role.EDITOR)
    as_eve = signed_in(eve)
    assert as_eve.get(revoke_url(alice.token)).status_code == 403
    assert as_eve.post(revoke_url(alice.token)).status_code == 403
    alice.token.refresh_from_db()
    assert alice.token.revoked_at is None
    assert alice.client().get("/api/v1/me").status_code == 200

    assert signed_in(alice).post(revoke_url(eve.token)).status_code == 302
    assert eve.client().get("/api/v1/me").status_code == 401


def test_a_token_of_another_workspace_is_not_found(alice, bob):
    as_alice = signed_in(alice)
    assert as_alice.get(revoke_url(bob.token)).status_code == 404
    assert as_alice.post(revoke_url(bob.token)).status_code == 404
    assert as_alice.post("/account/tokens/999999/revoke/").status_code == 404
    assert bob.client().get("/api/v1/me").status_code == 200


def test_hostile_token_names_are_rendered_as_text(alice):
    client = signed_in(alice)
    created = client.post("/account/tokens/", {"name": HOSTILE}).content.decode()
    listed = client.get("/account/tokens/").content.decode()
    token = ApiToken.objects.get(name=HOSTILE)
    confirm = client.get(revoke_url(token)).content.decode()
    revoked = client.post(revoke_url(token), follow=True).content.decode()
    for page in (created, listed, confirm, revoked):
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        assert "<script>alert(1)" not in page
        assert '<img src=x onerror="alert(2)">' not in page


# --- The workspace switcher ---------------------------------------------------------


@pytest.fixture
def ada(make_member):
    """A member of two workspaces: admin of "lab", viewer of "zoo"."""
    ada = make_member("ada", workspace="lab")
    zoo = make_member("zed", workspace="zoo").workspace
    do_set_membership(workspace=zoo, username="ada", role=Role.VIEWER)
    return ada


def current_slug(client: Client) -> str:
    return client.get("/account/tokens/").context["current_membership"].workspace.slug


def test_switching_changes_the_sessions_workspace_and_goes_back_without_ws(ada):
    client = signed_in(ada)
    assert current_slug(client) == "lab"
    response = client.post(
        "/workspace/switch/",
        {"ws": "zoo"},
        headers={"Referer": "http://testserver/explore/?ws=lab&focus=7"},
    )
    assert response.status_code == 302
    assert response["Location"] == "http://testserver/explore/?focus=7"
    assert current_slug(client) == "zoo"
    assert client.get("/account/tokens/").context["current_membership"].role == Role.VIEWER


def test_switching_to_a_workspace_you_do_not_belong_to_is_not_found(ada, bob):
    client = signed_in(ada)
    client.post("/workspace/switch/", {"ws": "zoo"})
    assert client.post("/workspace/switch/", {"ws": "globex"}).status_code == 404
    assert client.post("/workspace/switch/", {"ws": ""}).status_code == 404
    assert current_slug(client) == "zoo"


@pytest.mark.parametrize(
    "referer",
    ["https://evil.example/phish", "//evil.example/phish", "javascript:alert(1)", ""],
)
def test_switching_never_sends_you_to_another_site(ada, referer):
    headers = {"Referer": referer} if referer else {}
    response = signed_in(ada).post("/workspace/switch/", {"ws": "zoo"}, headers=headers)
    assert response.status_code == 302
    assert response["Location"] == "/"


def test_switching_needs_a_signed_in_post(ada):
    assert Client().post("/workspace/switch/", {"ws": "zoo"})["Location"].startswith("/login/")
    assert signed_in(ada).get("/workspace/switch/").status_code == 405


# --- Sign-in and first-run forms ----------------------------------------------------

SETUP = {
    "username": "ada",
    "email": "ada@example.org",
    "password": "correct horse battery",
    "password_again": "correct horse battery",
    "workspace_name": "Research Lab",
    "workspace_slug": "",
}


def test_the_sign_in_form_is_labelled_focused_and_autocompletes(alice):
    page = Client().get("/login/").content.decode()
    username, password = input_tag(page, "username"), input_tag(page, "password")
    assert "autofocus" in username
    assert 'autocomplete="username"' in username
    assert 'autocomplete="current-password"' in password
    assert '<label for="id_username">' in page
    assert '<label for="id_password">' in page


def test_a_failed_sign_in_says_so_keeps_the_username_and_signs_nobody_in(alice):
    client = Client()
    response = client.post("/login/?next=/explore/", {"username": "alice", "password": "wrong"})
    assert response.status_code == 200
    page = response.content.decode()
    assert re.search(r'role="alert"[^>]*>.*Please enter a correct username', page, re.S)
    assert 'value="alice"' in input_tag(page, "username")
    assert 'value="/explore/"' in input_tag(page, "next")
    assert "_auth_user_id" not in client.session


def test_the_first_run_form_focuses_the_first_field_then_the_first_problem():
    fresh = Client().get("/setup/").content.decode()
    assert "autofocus" in input_tag(fresh, "username")
    assert "autofocus" not in input_tag(fresh, "password_again")
    assert 'autocomplete="new-password"' in input_tag(fresh, "password")
    assert 'autocomplete="new-password"' in input_tag(fresh, "password_again")
    assert 'autocomplete="email"' in input_tag(fresh, "email")
    assert 'aria-describedby="id_workspace_slug_helptext"' in input_tag(fresh, "workspace_slug")
    assert 'id="id_workspace_slug_helptext"' in fresh

    response = Client().post("/setup/", {**SETUP, "password_again": "something else entirely"})
    page = response.content.decode()
    again = input_tag(page, "password_again")
    assert "autofocus" in again
    assert "autofocus" not in input_tag(page, "username")
    assert 'aria-invalid="true"' in again
    assert 'aria-describedby="id_password_again_error"' in again
    assert 'id="id_password_again_error"' in page
    assert re.search(
        r'role="alert".*href="#id_password_again".*The two passwords differ', page, re.S
    )
    assert not User.objects.exists()
