"""`manage.py unmerge --workspace SLUG EVENT_ID`: undo a merge exactly (the event id is
printed by `merge` and listed by `GET /curation-events`). Exit codes: 0 undone, 1 refused
(not a merge, undone already, not found), 2 usage."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.actions.curation.merge import do_unmerge
from workspaces.commands import workspace_for_command
from workspaces.errors import DomainError


class Command(BaseCommand):
    help = "Undo a merge: entities, aliases, mentions and relations as they were."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument("event_id", type=int, metavar="EVENT_ID")

    def handle(self, *args: Any, workspace: str, event_id: int, **options: Any) -> None:
        ws = workspace_for_command(workspace)
        try:
            event = do_unmerge(workspace=ws, event_id=event_id)
        except DomainError as exc:
            raise CommandError(exc.message, returncode=1) from exc
        self.stdout.write(f"{event.summary} (event {event.pk})")
