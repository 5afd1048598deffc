"""`manage.py ingest PATH [PATH ...] --workspace SLUG [--source NAME] [--tags a,b] [--wait]`

Files and directories (recursively). With `--source NAME` the files go into that upload
source (created if missing; a file with the same relative path is a new version of it).
With `--wait` a progress bar runs until the source finishes, then one JSON line:
`{"source": id, "status": ..., "documents": n, "failed": [{"path": ..., "error": ...}],
"chunks": n, "embedded": n}`. When no worker is alive, `--wait` does the work in this
process. Exit 0 when every document succeeded, 1 when some failed, 2 on usage errors.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from ingest.actions.pipeline import do_process_documents
from ingest.actions.sources import PENDING, do_add_files, do_create_upload_source
from ingest.models import Document, DocumentStatus, Source, SourceKind
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
        existing = (
            Source.objects.for_workspace(ws).filter(name=source, kind=SourceKind.UPLOAD).first()
            if source
            else None
        )
        try:
            if existing is not None:
                src = existing
                do_add_files(source=src, files=blocks, enqueue=not inline)
            else:
                src, _ = do_create_upload_source(
                    workspace=ws,
                    files=blocks,
                    name=source or ", ".join(Path(p).name for p in paths)[:300],
                    origin=" ".join(str(Path(p).resolve()) for p in paths)[:2000],
                    tags=tags.split(","),
                    enqueue=not inline,
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
        self._report(src)

    def _progress(self, total: int) -> tqdm:
        return tqdm(total=total, unit="doc", file=sys.stderr, disable=None, dynamic_ncols=True)

    def _process_inline(self, source: Source) -> None:
        ids = list(
            Document.objects.filter(source=source, status__in=PENDING).values_list("pk", flat=True)
        )
        size = max(1, settings.INGEST_DOCUMENTS_PER_TASK)
        with self._progress(len(ids)) as bar:
            for start in range(0, len(ids), size):
                group = ids[start : start + size]
                do_process_documents(document_ids=group)
                bar.update(len(group))

    def _wait(self, source: Source) -> None:
        total = Document.objects.filter(source=source).count()
        with self._progress(total) as bar:
            while True:
                source.refresh_from_db()
                finished = (
                    total - Document.objects.filter(source=source, status__in=PENDING).count()
                )
                bar.update(finished - bar.n)
                if source.status not in {"queued", "running"}:
                    return
                time.sleep(0.5)

    def _report(self, source: Source) -> None:
        source.refresh_from_db()
        failed = list(
            Document.objects.filter(source=source, status=DocumentStatus.FAILED)
            .order_by("path")
            .values("path", "error")
        )
        counters = source.counters
        self.stdout.write(
            json.dumps(
                {
                    "source": source.pk,
                    "status": source.status,
                    "documents": counters.get("documents", 0),
                    "failed": failed,
                    "chunks": counters.get("chunks", 0),
                    "embedded": counters.get("embedded", 0),
                }
            )
        )
        if source.warning:
            self.stderr.write(source.warning)
        if failed or source.status != "done":
            raise CommandError(
                f"{len(failed)} document(s) failed; source is {source.status}.", returncode=1
            )
