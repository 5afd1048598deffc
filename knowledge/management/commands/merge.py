"""`manage.py merge --workspace SLUG ENTITY ENTITY [...] [--into ENTITY]`: merge entities
(ENTITY = id or exact name). Prints the event id that `manage.py unmerge` takes.
Exit codes: 0 merged, 1 refused (not active, not found), 2 usage (ambiguous name)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.actions.curation.merge import do_merge_entities
from knowledge.selectors.curation import find_entity
from workspaces.commands import workspace_for_command
from workspaces.errors import DomainError, InvalidInput


class Command(BaseCommand):
    help = "Merge entities into one (reversible with unmerge)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument("entities", nargs="+", metavar="ENTITY", help="id or exact name")
        parser.add_argument(
            "--into", metavar="ENTITY", help="the survivor (default: most mentions)"
        )

    def handle(
        self, *args: Any, workspace: str, entities: list[str], into: str | None, **options: Any
    ) -> None:
        ws = workspace_for_command(workspace)
        try:
            found = [find_entity(ws, ref) for ref in entities]
            survivor = find_entity(ws, into) if into else None
            if len({e.pk for e in found} | ({survivor.pk} if survivor else set())) < 2:
                raise InvalidInput("Name at least two different entities.")
            event = do_merge_entities(
                workspace=ws,
                survivor_id=survivor.pk if survivor else None,
                merged_ids=[e.pk for e in found],
            )
        except InvalidInput as exc:
            raise CommandError(exc.message, returncode=2) from exc
        except DomainError as exc:
            raise CommandError(exc.message, returncode=1) from exc
        self.stdout.write(f"{event.summary} (event {event.pk}; undo: manage.py unmerge "
                          f"--workspace {ws.slug} {event.pk})")  # fmt: skip
