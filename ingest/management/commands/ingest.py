"""`manage.py ingest PATH [PATH ...] --workspace SLUG [--source NAME] [--tags a,b] [--wait]`

Files and directories (recursively). With `--source NAME` the files go into that upload
source (created if missing; a file with the same relative path is a new version of it).
With `--wait` a progress bar runs until the source finishes, then one JSON line:
`{"source": id, "status": ..., "documents": n, "failed": [{"path": ..., "error": ...}],
"chunks": n, "embedded": n}`. Each file's modification time is its document's date unless
its content states one. When no worker is alive, `--wait` does the work in this
process. Exit 0 when every document succeeded, 1 when some failed, 2 on usage errors.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.actions.pipeline import do_process_documents
from ingest.actions.sources import do_add_files, do_create_upload_source
from ingest.dispatch import document_groups
from ingest.management.progress import progress_bar, report_source, wait_for_source
from ingest.models import PENDING, Document, Source, SourceKind
from ingest.parsers.dates import from_timestamp
from system.selectors import get_worker_status
from workspaces.commands import workspace_for_command
from workspaces.errors import DomainError

_READ_BLOCK = 1 << 20


def _files(paths: list[str]) -> list[tuple[Path, str]]:
    """(file, document path) pairs; a directory contributes its files relative to itself."""
    found: list[tuple[Path, str]] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            for child in sorted(p for p in path.rglob("*") if p.is_file()):
                if any(part.startswith(".") for part in child.relative_to(path).parts):
                    continue  # hidden files and folders (.git, .DS_Store)
                found.append((child, f"{path.name}/{child.relative_to(path).as_posix()}"))
        elif path.is_file():
            found.append((path, path.name))
        else:
            raise CommandError(f"No such file or directory: {raw}", returncode=2)
    return found


def _modified_times(files: list[tuple[Path, str]]) -> dict[str, datetime]:
    """Each file's modification time, by document path: its date unless its content
    states one (ingest/parsers/dates.py; an implausible time is none)."""
    times: dict[str, datetime] = {}
    for path, name in files:
        moment = from_timestamp(path.stat().st_mtime)
        if moment is not None:
            times[name] = moment
    return times


def _blocks(path: Path) -> Any:
    with path.open("rb") as fh:
        while block := fh.read(_READ_BLOCK):
            yield block


class Command(BaseCommand):
    help = "Ingest files and directories into a workspace."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument("--source", metavar="NAME", help="upload source to add to (by name)")
        parser.add_argument("--tags", default="", help="comma-separated tags for a new source")
        parser.add_argument("--wait", action="store_true", help="wait, show progress, print JSON")

    def handle(
        self,
        *args: Any,
        paths: list[str],
        workspace: str,
        source: str | None,
        tags: str,
        wait: bool,
        **options: Any,
    ) -> None:
        ws = workspace_for_command(workspace)
        files = _files(paths)
        if not files:
            raise CommandError("No files found in the given paths.", returncode=2)
        inline = wait and get_worker_status().status != "ok"
        blocks = [(name, _blocks(path)) for path, name in files]
        modified = _modified_times(files)
        existing = (
            Source.objects.for_workspace(ws).filter(name=source, kind=SourceKind.UPLOAD).first()
            if source
            else None
        )
        try:
            if existing is not None:
                src = existing
                do_add_files(source=src, files=blocks, enqueue=not inline, modified=modified)
            else:
                src, _ = do_create_upload_source(
                    workspace=ws,
                    files=blocks,
                    name=source or ", ".join(Path(p).name for p in paths)[:300],
                    origin=" ".join(str(Path(p).resolve()) for p in paths)[:2000],
                    tags=tags.split(","),
                    enqueue=not inline,
                    modified=modified,
                )
        except DomainError as exc:
            raise CommandError(exc.message, returncode=1) from exc
        self.stderr.write(f"source {src.pk}: {len(files)} file(s) queued")
        if not wait:
            self.stdout.write(
                json.dumps({"source": src.pk, "status": "queued", "documents": len(files)})
            )
            return
        if inline:
            self.stderr.write("no worker is running: processing in this process")
            self._process_inline(src)
        else:
            self._wait(src)
        report_source(src, stdout=self.stdout, what="document(s)", warnings=self.stderr)

    def _process_inline(self, source: Source) -> None:
        pending = Document.objects.filter(source=source, status__in=PENDING)
        with progress_bar(unit="doc", total=pending.count()) as bar:
            # A second round, when there is one, takes the documents chunked before text
            # they share with later ones was known to repeat (ingest/actions/boilerplate.py).
            for _ in range(3):
                groups = document_groups(pending.values_list("pk", flat=True))
                if not groups:
                    break
                bar.total = bar.n + sum(len(group) for group in groups)
                for group in groups:
                    do_process_documents(document_ids=group)
                    bar.update(len(group))

    def _wait(self, source: Source) -> None:
        total = Document.objects.filter(source=source).count()
        with progress_bar(unit="doc", total=total) as bar:

            def show(current: Source) -> None:
                pending = Document.objects.filter(source=current, status__in=PENDING).count()
                bar.update(total - pending - bar.n)

            wait_for_source(source, show=show)
