"""`manage.py export_workspace SLUG -o FILE [--no-vectors]`: the whole workspace — sources
and their stored files, documents, chunks with their embeddings, the graph with its
evidence, aliases, the schema, curation events and rules — as one zip archive that
`import_workspace` reads (knowledge/archive/). The file is written beside its final name
and renamed into place. Exit codes: 0 written, 1 could not write (or a stored file no
longer matches its hash), 2 usage (unknown workspace)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.actions.workspace_archive import do_export_workspace
from knowledge.archive.format import ArchiveError
from workspaces.commands import workspace_for_command


class Command(BaseCommand):
    help = "Export a workspace to one archive file (import it with import_workspace)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", metavar="SLUG")
        parser.add_argument("-o", "--output", required=True, metavar="FILE")
        parser.add_argument(
            "--no-vectors",
            action="store_true",
            help="leave the embeddings out (smaller; recompute with backfill_embeddings)",
        )

    def handle(self, *args: Any, slug: str, output: str, no_vectors: bool, **options: Any) -> None:
        workspace = workspace_for_command(slug)
        try:
            result = do_export_workspace(
                workspace=workspace, output=Path(output), vectors=not no_vectors
            )
        except ArchiveError as exc:
            raise CommandError(f"Export failed: {exc}", returncode=1) from exc
        except OSError as exc:
            raise CommandError(
                f"Cannot write {output}: {exc.strerror or exc}", returncode=1
            ) from exc
        rows = sum(result.counts.values())
        self.stdout.write(
            f"Wrote {result.path} ({result.path.stat().st_size} bytes): {rows} rows, "
            f"{result.blobs} stored files."
        )
        for name in result.blobs_missing:
            self.stderr.write(f"Left out (missing on disk): {name}")
