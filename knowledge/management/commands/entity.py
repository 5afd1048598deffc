"""`manage.py entity delete ID --workspace SLUG` and `manage.py entity undo EVENT_ID
--workspace SLUG [--cascade]`: one entity from the command line, through the curation
actions the API, the explorer and the entities page use (subcommands; room for more).

`delete` is `do_delete_entity`: the entity and its relations are hidden and its names
blocked, so extraction does not bring it back; it prints the curation event and the
command that undoes it. `undo` is `do_undo_event`, the History page's Undo: it undoes that
event exactly (for a delete: the entity, its relations and its names come back), refused
while a later decision still stands on it unless `--cascade`.

Exit codes: 0 done, 1 not found (another workspace's entity or event is not found either)
or refused (already deleted, undone already), with the reason on stderr, 2 usage (unknown
workspace, arguments).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.actions.curation.entities import do_delete_entity
from knowledge.actions.curation.undo import do_undo_event
from knowledge.models import CurationEvent
from workspaces.commands import workspace_for_command
from workspaces.errors import DomainError
from workspaces.models import Workspace


class Command(BaseCommand):
    help = "Act on one entity of a workspace: delete it, or undo a curation event."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        delete = actions.add_parser(
            "delete", help="delete the entity (its names are blocked; undoable)"
        )
        delete.add_argument("entity_id", type=int, metavar="ID")
        delete.add_argument("--workspace", required=True, metavar="SLUG")
        undo = actions.add_parser(
            "undo", help="undo a curation event exactly (the event id `delete` printed)"
        )
        undo.add_argument("event_id", type=int, metavar="EVENT_ID")
        undo.add_argument("--workspace", required=True, metavar="SLUG")
        undo.add_argument(
            "--cascade", action="store_true", help="undo the later events that depend on it first"
        )

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        ws = workspace_for_command(options["workspace"])
        try:
            if action == "delete":
                event = do_delete_entity(workspace=ws, entity_id=options["entity_id"])
            else:
                event = do_undo_event(
                    workspace=ws, event_id=options["event_id"], cascade=options["cascade"]
                )
        except DomainError as exc:
            raise CommandError(exc.message, returncode=1) from exc
        self.stdout.write(self._said(ws, event, undoable=action == "delete"))

    @staticmethod
    def _said(ws: Workspace, event: CurationEvent, *, undoable: bool) -> str:
        line = f"{event.summary} (event {event.pk}"
        if undoable:
            line += f"; undo: manage.py entity undo {event.pk} --workspace {ws.slug}"
        return line + ")"
