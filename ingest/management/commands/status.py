"""`manage.py status [SOURCE_ID] --workspace SLUG [--json]`: sources and their progress."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.schemas import SourceOut
from ingest.selectors import (
    get_failed_documents,
    get_source_for_workspace,
    get_sources,
    with_figures,
)
from workspaces.commands import workspace_for_command
from workspaces.errors import NotFound


class Command(BaseCommand):
    help = "Show sources of a workspace (or one source) with status, stage and counters."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source_id", nargs="?", type=int, metavar="SOURCE_ID")
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(
        self, *args: Any, source_id: int | None, workspace: str, as_json: bool, **options: Any
    ) -> None:
        ws = workspace_for_command(workspace)
        if source_id is None:
            rows = [self._row(s, failed=False) for s in with_figures(get_sources(ws)[:200])]
        else:
            try:
                rows = [self._row(get_source_for_workspace(ws, source_id), failed=True)]
            except NotFound as exc:
                raise CommandError(exc.message, returncode=1) from exc
        if as_json:
            self.stdout.write(json.dumps(rows if source_id is None else rows[0], default=str))
            return
        for row in rows:
            c = row["counters"]
            self.stdout.write(
                f"{row['id']:>6}  {row['status']:<9} {row['stage'] or '-':<10} "
                f"docs {c.get('done', 0)}/{c.get('documents', 0)} failed {c.get('failed', 0)} "
                f"chunks {c.get('embedded', 0)}/{c.get('chunks', 0)} embedded  {row['name']}"
            )
            for failure in row.get("failed", []):
                self.stdout.write(f"        failed: {failure['path']}: {failure['error']}")
            if row["warning"]:
                self.stdout.write(f"        warning: {row['warning']}")

    def _row(self, source: Any, *, failed: bool) -> dict[str, Any]:
        row = SourceOut.model_validate(source).model_dump(mode="json")
        if failed:
            row["failed"] = get_failed_documents(source)
        return row
