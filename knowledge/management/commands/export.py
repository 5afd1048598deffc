"""`manage.py export --workspace SLUG --format json|graphml|csv|cypher [--part
entities|relations] [--output FILE]`: the workspace's active graph, written by the same
streaming generators as `GET /api/v1/workspaces/{slug}/export` (constant memory). CSV is
one table per run (`--part`). Without `--output` (or with `-`) it goes to stdout; a file is
written beside its final name and renamed into place, so a failed export never leaves a
truncated file behind. Exit codes: 0 done, 1 could not write, 2 usage (unknown workspace,
csv without --part)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.export import CSV_PARTS, FORMATS, export_graph
from workspaces.commands import workspace_for_command
from workspaces.errors import InvalidInput


class Command(BaseCommand):
    help = "Export a workspace's graph as JSON, GraphML, CSV or Cypher."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument("--format", required=True, choices=FORMATS, dest="fmt")
        parser.add_argument("--part", choices=CSV_PARTS, help="csv only: which table")
        parser.add_argument("--output", metavar="FILE", help="default: stdout")

    def handle(
        self,
        *args: Any,
        workspace: str,
        fmt: str,
        part: str | None,
        output: str | None,
        **options: Any,
    ) -> None:
        ws = workspace_for_command(workspace)
        if part is not None and fmt != "csv":
            raise CommandError("--part applies to --format csv only.", returncode=2)
        try:
            result = export_graph(ws, fmt=fmt, part=part)
        except InvalidInput as exc:
            raise CommandError(exc.message.replace("part:", "--part:"), returncode=2) from exc
        if output is None or output == "-":
            for piece in result.pieces:
                self.stdout.write(piece, ending="")
            return
        target = Path(output)
        partial = target.with_name(f".{target.name}.partial")
        try:
            with partial.open("w", encoding="utf-8", newline="") as handle:
                for piece in result.pieces:
                    handle.write(piece)
            os.replace(partial, target)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            message = f"Cannot write {output}: {exc.strerror or exc}"
            raise CommandError(message, returncode=1) from exc
        self.stderr.write(f"Wrote {target} ({target.stat().st_size} bytes)")
