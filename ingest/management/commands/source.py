"""`manage.py source delete ID --workspace SLUG [--wait]`: a source from the command line,
through the actions the API and the source page use (subcommands; room for more).

`delete` asks for the source's deletion as the page's Delete does
(`do_request_source_deletion`: the source shows as deleting at once, and a worker deletes
it with its documents, chunks and everything derived from them). With `--wait` it returns
once the source is gone: the deletion runs in this process when no worker is alive
(`do_delete_source`, the worker task's action), else the command waits for the worker.
A deletion is not undoable. Prints one JSON line `{"source": id, "name": ..., "status":
"deleting" | "deleted"}`.

Exit codes: 0 done, 1 not found (another workspace's source is not found either) or
refused, with the reason on stderr, 2 usage (unknown workspace, arguments).
"""

from __future__ import annotations

import json
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.actions.sources import do_delete_source, do_request_source_deletion
from ingest.management.progress import POLL_SECONDS
from ingest.models import Source
from ingest.selectors import get_source_for_workspace
from system.selectors import get_worker_status
from workspaces.commands import workspace_for_command
from workspaces.errors import DomainError


class Command(BaseCommand):
    help = "Act on one source of a workspace: delete it (with everything derived from it)."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        delete = actions.add_parser(
            "delete", help="delete the source, its documents and everything derived from them"
        )
        delete.add_argument("source_id", type=int, metavar="ID")
        delete.add_argument("--workspace", required=True, metavar="SLUG")
        delete.add_argument(
            "--wait", action="store_true", help="return once it is gone (in this process "
            "when no worker is running)"
        )  # fmt: skip

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        if action == "delete":
            self._delete(options["source_id"], workspace=options["workspace"], wait=options["wait"])

    def _delete(self, source_id: int, *, workspace: str, wait: bool) -> None:
        ws = workspace_for_command(workspace)
        try:
            source = do_request_source_deletion(source=get_source_for_workspace(ws, source_id))
        except DomainError as exc:
            raise CommandError(exc.message, returncode=1) from exc
        status = "deleting"
        self.stderr.write(
            f"source {source.pk}: deleting “{source.name}” and everything derived from it"
        )
        if wait:
            if get_worker_status().status != "ok":
                self.stderr.write("no worker is running: deleting in this process")
                do_delete_source(source_id=source.pk)
            while Source.objects.filter(pk=source.pk).exists():
                time.sleep(POLL_SECONDS)
            status = "deleted"
        self.stdout.write(json.dumps({"source": source.pk, "name": source.name, "status": status}))
