"""`manage.py import_workspace ARCHIVE --slug NEW [--name NAME] [--owner USERNAME]`: create
workspace NEW from an archive written by `export_workspace`, every id new, curation
history and rules pointing at the new rows. All or nothing: the archive is checked whole
before anything is written, and a failure leaves no workspace, no rows and no files.
Exit codes: 0 imported, 1 the archive is corrupt, invalid or of an unknown format version
(the message says which member and line), 2 usage (slug taken or malformed, unknown
owner, no such file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.actions.workspace_archive import do_import_workspace
from knowledge.archive.format import ArchiveError
from workspaces.errors import DomainError


class Command(BaseCommand):
    help = "Import a workspace archive (from export_workspace) as a new workspace."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("archive", metavar="ARCHIVE")
        parser.add_argument("--slug", required=True, metavar="NEW")
        parser.add_argument("--name", default="", help="default: the exported workspace's")
        parser.add_argument("--owner", metavar="USERNAME", help="made its first admin")

    def handle(
        self,
        *args: Any,
        archive: str,
        slug: str,
        name: str,
        owner: str | None,
        **options: Any,
    ) -> None:
        path = Path(archive)
        if not path.is_file():
            raise CommandError(f"No such file: {archive}", returncode=2)
        user = None
        if owner:
            user = get_user_model().objects.filter(username=owner).first()
            if user is None:
                raise CommandError(f"User {owner!r} not found.", returncode=2)
        try:
            result = do_import_workspace(archive=path, slug=slug, name=name, owner=user)
        except ArchiveError as exc:
            raise CommandError(f"Invalid archive: {exc}", returncode=1) from exc
        except DomainError as exc:
            raise CommandError(exc.message, returncode=2) from exc
        rows = sum(result.counts.values())
        self.stdout.write(
            f"Imported workspace {result.workspace.slug!r}: {rows} rows, "
            f"{result.blobs} stored files."
        )
