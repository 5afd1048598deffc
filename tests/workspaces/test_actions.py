"""Workspace, membership, token and first-run actions."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth.models import User
from django.db import connection

from workspaces import tokens
from workspaces.actions.first_run import do_first_run_setup
from workspaces.actions.tokens import do_create_api_token, do_revoke_api_token
from workspaces.actions.workspaces import do_create_workspace, do_set_membership
from workspaces.errors import Conflict, InvalidInput, NotFound
from workspaces.models import ApiToken, Membership, Role, Workspace


@pytest.mark.django_db
def test_create_workspace_makes_the_owner_admin():
    owner = User.objects.create_user("olga")
    workspace = do_create_workspace(slug="Research", name="Research team", owner=owner)
    assert workspace.slug == "research"
    assert Membership.objects.get(workspace=workspace, user=owner).role == Role.ADMIN


@pytest.mark.django_db
def test_duplicate_and_invalid_slugs_are_refused_without_side_effects():
    do_create_workspace(slug="acme")
    with pytest.raises(Conflict):
        do_create_workspace(slug="acme", name="Another")
    with pytest.raises(InvalidInput):
        do_create_workspace(slug="no spaces/allowed")
    with pytest.raises(InvalidInput, match="reserved"):
        do_create_workspace(slug="Import")  # POST /api/v1/workspaces/import is an endpoint
    assert list(Workspace.objects.values_list("slug", flat=True)) == ["acme"]


@pytest.mark.django_db
def test_set_membership_changes_role_and_refuses_unknown_users_and_roles():
    workspace = do_create_workspace(slug="acme")
    User.objects.create_user("dan")
    assert do_set_membership(workspace=workspace, username="dan", role="viewer").role == "viewer"
    assert do_set_membership(workspace=workspace, username="dan", role="editor").role == "editor"
    assert Membership.objects.filter(workspace=workspace).count() == 1
    with pytest.raises(NotFound):
        do_set_membership(workspace=workspace, username="nobody", role="viewer")
    with pytest.raises(InvalidInput):
        do_set_membership(workspace=workspace, username="dan", role="owner")


@pytest.mark.django_db
def test_token_secret_is_stored_only_as_a_hash():
    workspace = do_create_workspace(slug="acme")
    user = User.objects.create_user("erin")
    issued = do_create_api_token(workspace=workspace, user=user, name="ci")
    row = ApiToken.objects.get(pk=issued.token.pk)
    assert issued.plaintext.startswith(f"glm_{row.prefix}_")
    assert row.secret_hash == tokens.hash_token(issued.plaintext)
    assert issued.plaintext not in {row.secret_hash, row.prefix, row.name}
    with pytest.raises(InvalidInput):
        do_create_api_token(workspace=workspace, user=user, name="  ")


@pytest.mark.django_db
def test_revoking_twice_keeps_the_first_revocation_time():
    workspace = do_create_workspace(slug="acme")
    user = User.objects.create_user("fay")
    token = do_create_api_token(workspace=workspace, user=user, name="ci").token
    first = do_revoke_api_token(token=token).revoked_at
    assert do_revoke_api_token(token=token).revoked_at == first


@pytest.mark.django_db
def test_first_run_creates_superuser_and_workspace_once():
    result = do_first_run_setup(
        username="root",
        email="",
        password="a long pass phrase",
        workspace_name="Lab",
        workspace_slug="lab",
    )
    assert result.user.is_superuser
    assert result.user.check_password("a long pass phrase")
    assert Membership.objects.get(user=result.user, workspace__slug="lab").role == Role.ADMIN
    with pytest.raises(Conflict):
        do_first_run_setup(
            username="other",
            email="",
            password="another pass phrase",
            workspace_name="X",
            workspace_slug="x",
        )
    assert User.objects.count() == 1
    assert Workspace.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_first_runs_create_exactly_one_account():
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def attempt(n: int) -> None:
        barrier.wait()
        try:
            do_first_run_setup(
                username=f"admin{n}",
                email="",
                password="a long pass phrase",
                workspace_name=f"W{n}",
                workspace_slug=f"w{n}",
            )
            outcomes.append("created")
        except Conflict:
            outcomes.append("conflict")
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["conflict", "created"]
    assert User.objects.count() == 1
    assert Workspace.objects.count() == 1
