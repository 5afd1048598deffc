"""The first-run setup: the first admin account and the first workspace, exactly once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.db import connection, transaction

from workspaces.actions.workspaces import do_create_workspace
from workspaces.errors import Conflict
from workspaces.models import Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Any fixed number: serialises concurrent first-run submissions (two tabs, a double click).
_FIRST_RUN_LOCK = 0x6C6F6F6D


@dataclass(frozen=True, slots=True)
class FirstRunResult:
    user: User
    workspace: Workspace


@transaction.atomic
def do_first_run_setup(
    *, username: str, email: str, password: str, workspace_name: str, workspace_slug: str
) -> FirstRunResult:
    """Create the superuser and the first workspace, unless any account exists already.

    There is no default password anywhere: the person at the keyboard chooses it here.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_FIRST_RUN_LOCK])
    user_model = get_user_model()
    if user_model.objects.exists():
        raise Conflict("Graphloom is already set up; sign in instead.")
    user = user_model.objects.create_superuser(username=username, email=email, password=password)
    workspace = do_create_workspace(slug=workspace_slug, name=workspace_name, owner=user)
    return FirstRunResult(user=user, workspace=workspace)
