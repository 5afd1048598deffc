"""`manage.py workspace create|list|add-member|token|delete`: tenancy for scripts.

    workspace create SLUG [--name NAME] [--owner USERNAME]
    workspace list [--json]
    workspace add-member --workspace SLUG USERNAME [--role viewer|editor|admin] [--create-user]
    workspace token --workspace SLUG USERNAME --name NAME     (prints the secret once)
    workspace token --workspace SLUG --list [--json]
    workspace token --workspace SLUG --revoke TOKEN_ID
    workspace delete SLUG [--yes] [--batch-size N]   (asks to type the slug unless --yes;
        deletes in the foreground, printing progress; resumes a deletion left unfinished)

Exit status: 0 on success, 1 when the action fails (e.g. not found), 2 on usage errors.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from workspaces.actions.tokens import do_create_api_token, do_revoke_api_token
from workspaces.actions.workspaces import (
    DELETION_BATCH_SIZE,
    do_create_user,
    do_create_workspace,
    do_delete_workspace,
    do_request_workspace_deletion,
    do_set_membership,
)
from workspaces.errors import DomainError, InvalidInput, NotFound
from workspaces.models import Membership, Role, Workspace
from workspaces.selectors import get_api_token_for_workspace, get_api_tokens


def _workspace(slug: str, *, being_deleted: bool = False) -> Workspace:
    """The workspace `slug`; one being deleted is missing, except to `delete` (which
    finishes a deletion left unfinished)."""
    workspace = Workspace.objects.filter(slug=slug).first()
    if workspace is None or (workspace.deletion_requested_at and not being_deleted):
        raise NotFound(f"Workspace {slug!r} not found.")
    return workspace


class Command(BaseCommand):
    help = "Create and list workspaces, add members, issue and revoke API tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True, parser_class=CommandParser)

        create = sub.add_parser("create", help="create a workspace")
        create.add_argument("slug")
        create.add_argument("--name", default="")
        create.add_argument("--description", default="")
        create.add_argument("--owner", help="username that becomes the workspace's admin")

        lst = sub.add_parser("list", help="list workspaces")
        lst.add_argument("--json", action="store_true", dest="as_json")

        member = sub.add_parser("add-member", help="add a user or change their role")
        member.add_argument("--workspace", required=True)
        member.add_argument("username")
        member.add_argument("--role", choices=Role.values, default=Role.VIEWER)
        member.add_argument(
            "--create-user",
            action="store_true",
            help="create the user if missing (no password: set one in the admin before sign-in)",
        )

        token = sub.add_parser("token", help="issue, list or revoke API tokens")
        token.add_argument("--workspace", required=True)
        token.add_argument("username", nargs="?")
        token.add_argument("--name", help="what the token is for")
        token.add_argument("--list", action="store_true", dest="list_tokens")
        token.add_argument("--revoke", type=int, metavar="TOKEN_ID")
        token.add_argument("--json", action="store_true", dest="as_json")

        delete = sub.add_parser("delete", help="delete a workspace and everything in it")
        delete.add_argument("slug")
        delete.add_argument("--yes", action="store_true", help="do not ask for confirmation")
        delete.add_argument("--batch-size", type=int, default=DELETION_BATCH_SIZE)

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        try:
            getattr(self, "_" + action.replace("-", "_"))(**options)
        except InvalidInput as exc:
            raise CommandError(exc.message, returncode=2) from exc
        except DomainError as exc:
            raise CommandError(exc.message, returncode=1) from exc

    def _user(self, username: str) -> Any:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise NotFound(f"User {username!r} not found.")
        return user

    def _create(
        self, *, slug: str, name: str, description: str, owner: str | None, **_: Any
    ) -> None:
        owner_user = self._user(owner) if owner else None
        workspace = do_create_workspace(
            slug=slug, name=name, description=description, owner=owner_user
        )
        self.stdout.write(f"created workspace {workspace.slug!r} ({workspace.name})")

    def _list(self, *, as_json: bool = False, **_: Any) -> None:
        rows = [
            {
                "slug": ws.slug,
                "name": ws.name,
                "members": Membership.objects.filter(workspace=ws).count(),
            }
            for ws in Workspace.objects.filter(deletion_requested_at=None).order_by("slug")
        ]
        if as_json:
            self.stdout.write(json.dumps(rows))
            return
        for row in rows:
            self.stdout.write(f"{row['slug']}\t{row['name']}\t{row['members']} member(s)")

    def _delete(self, *, slug: str, yes: bool, batch_size: int, **_: Any) -> None:
        ws = _workspace(slug, being_deleted=True)
        if batch_size < 1:
            raise InvalidInput("--batch-size must be at least 1.")
        if not yes and ws.deletion_requested_at is None:
            self.stdout.write(
                f"This deletes workspace {ws.slug!r} ({ws.name}) with all its sources, "
                "documents, graph and history. It cannot be undone."
            )
            if input("Type the workspace's slug to confirm: ").strip() != ws.slug:
                raise InvalidInput("Not confirmed; nothing was deleted.")
        do_request_workspace_deletion(workspace=ws, actor=None, in_background=False)
        do_delete_workspace(workspace_id=ws.pk, batch_size=batch_size, progress=self._progress)
        self.stdout.write(f"deleted workspace {ws.slug!r}")

    def _progress(self, what: str, rows: int) -> None:
        self.stdout.write(f"  {what}: {rows} deleted")

    def _add_member(
        self, *, workspace: str, username: str, role: str, create_user: bool, **_: Any
    ) -> None:
        ws = _workspace(workspace)
        if create_user and not get_user_model().objects.filter(username=username).exists():
            do_create_user(username=username)
            self.stdout.write(f"created user {username!r} (no password yet)")
        membership = do_set_membership(workspace=ws, username=username, role=role)
        self.stdout.write(f"{username} is {membership.role} in {ws.slug}")

    def _token(
        self,
        *,
        workspace: str,
        username: str | None,
        name: str | None,
        list_tokens: bool,
        revoke: int | None,
        as_json: bool,
        **_: Any,
    ) -> None:
        ws = _workspace(workspace)
        if list_tokens:
            rows = [
                {
                    "id": t.pk,
                    "name": t.name,
                    "prefix": t.prefix,
                    "user": t.user.get_username(),
                    "revoked": t.revoked_at is not None,
                }
                for t in get_api_tokens(ws)
            ]
            if as_json:
                self.stdout.write(json.dumps(rows))
                return
            for row in rows:
                state = "revoked" if row["revoked"] else "active"
                self.stdout.write(
                    f"{row['id']}\t{row['prefix']}\t{row['user']}\t{row['name']}\t{state}"
                )
            return
        if revoke is not None:
            token = do_revoke_api_token(token=get_api_token_for_workspace(ws, revoke))
            self.stdout.write(f"revoked token {token.pk} ({token.name})")
            return
        if not username or not name:
            raise InvalidInput(
                "Issuing a token needs USERNAME and --name (or use --list / --revoke)."
            )
        user = self._user(username)
        if not Membership.objects.filter(workspace=ws, user=user).exists():
            raise NotFound(f"User {username!r} is not a member of {ws.slug!r}.")
        issued = do_create_api_token(workspace=ws, user=user, name=name)
        if as_json:
            self.stdout.write(json.dumps({"id": issued.token.pk, "token": issued.plaintext}))
        else:
            self.stderr.write("Store this token now; it is not shown again:")
            self.stdout.write(issued.plaintext)
