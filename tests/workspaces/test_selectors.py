"""Workspace scoping: objects of another workspace look exactly like missing ones."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser

from workspaces.actions.tokens import do_revoke_api_token
from workspaces.actions.workspaces import do_set_membership
from workspaces.errors import NotFound, PermissionDenied
from workspaces.models import ApiToken, Role
from workspaces.selectors import (
    authenticate_api_token,
    get_api_token_for_workspace,
    get_membership,
    get_workspaces_for_user,
    require_role,
)


def test_object_of_another_workspace_is_reported_like_a_missing_one(alice, bob):
    with pytest.raises(NotFound) as foreign:
        get_api_token_for_workspace(alice.workspace, bob.token.pk)
    with pytest.raises(NotFound) as missing:
        get_api_token_for_workspace(alice.workspace, 987654321)
    assert str(foreign.value).replace(str(bob.token.pk), "ID") == str(missing.value).replace(
        "987654321", "ID"
    )
    assert get_api_token_for_workspace(alice.workspace, alice.token.pk) == alice.token


def test_malformed_ids_are_not_found_rather_than_errors(alice):
    with pytest.raises(NotFound):
        get_api_token_for_workspace(alice.workspace, "not-a-number")


def test_membership_of_a_stranger_is_not_found(alice, bob):
    with pytest.raises(NotFound):
        get_membership(alice.user, "globex")
    with pytest.raises(NotFound):
        get_membership(AnonymousUser(), "acme")
    assert get_membership(alice.user, "acme").role == Role.ADMIN


def test_token_sees_only_its_own_workspace(make_member, bob):
    carol = make_member("carol", workspace="acme", role=Role.EDITOR)
    do_set_membership(workspace=bob.workspace, username="carol", role=Role.VIEWER)
    assert {w.slug for w in get_workspaces_for_user(carol.user)} == {"acme", "globex"}
    assert [w.slug for w in get_workspaces_for_user(carol.user, api_token=carol.token)] == ["acme"]
    with pytest.raises(NotFound):
        get_membership(carol.user, "globex", api_token=carol.token)


def test_roles_are_ordered(make_member):
    viewer = make_member("vic", role=Role.VIEWER)
    membership = get_membership(viewer.user, "acme")
    require_role(membership, Role.VIEWER)
    with pytest.raises(PermissionDenied):
        require_role(membership, Role.EDITOR)
    with pytest.raises(PermissionDenied):
        require_role(membership, Role.ADMIN)


def test_authenticate_accepts_only_active_well_formed_tokens(alice):
    assert authenticate_api_token(alice.plaintext) == alice.token
    assert authenticate_api_token(alice.plaintext + "x") is None
    assert authenticate_api_token("glm_short_x") is None
    assert authenticate_api_token("") is None
    do_revoke_api_token(token=alice.token)
    assert authenticate_api_token(alice.plaintext) is None


def test_authenticate_refuses_tokens_of_deactivated_users(alice):
    alice.user.is_active = False
    alice.user.save()
    assert authenticate_api_token(alice.plaintext) is None


def test_last_used_is_written_at_most_once_per_interval(alice, django_assert_num_queries):
    authenticate_api_token(alice.plaintext)
    first = ApiToken.objects.get(pk=alice.token.pk).last_used_at
    assert first is not None
    with django_assert_num_queries(1):  # the lookup only, no UPDATE
        authenticate_api_token(alice.plaintext)
    assert ApiToken.objects.get(pk=alice.token.pk).last_used_at == first
