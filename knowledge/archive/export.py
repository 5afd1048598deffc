"""Export a workspace to one archive file (format.py), table by table.

Reads only, one streaming query per table (server-side cursor, `iterator`), so memory
stays flat however big the workspace. The file is written beside its final name and
renamed into place: a failed export never leaves a truncated archive behind. The rows are
read in one repeatable-read transaction (when the export is not itself inside one), so
the tables agree with each other even while the workspace keeps changing. A stored file
whose bytes no longer match its hash fails the export (say so rather than ship it); a
missing one is left out and reported.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from ingest.blobs import blob_path
from ingest.models import Document
from knowledge.archive.format import ArchiveWriter
from knowledge.archive.tables import M2M_FIELDS, TABLES, Table, encode_value, is_user, key_of
from knowledge.models import RelationType
from workspaces.models import Workspace

logger = logging.getLogger(__name__)

_SHA256 = re.compile(r"\A[0-9a-f]{64}\Z")
_BATCH = 2000


@dataclass
class ExportResult:
    path: Path
    counts: dict[str, int]
    blobs: int = 0
    # Documents whose stored file was missing or did not match its hash (left out).
    blobs_missing: list[str] = field(default_factory=list)


def app_version() -> str:
    try:
        return importlib.metadata.version("graphloom")
    except importlib.metadata.PackageNotFoundError:  # a bare checkout
        return "0.0.0"


def export_workspace(workspace: Workspace, *, output: Path, vectors: bool = True) -> ExportResult:
    """Write `workspace` to `output` (a zip); returns what was written."""
    output = Path(output)
    partial = output.with_name(f".{output.name}.partial")
    writer = ArchiveWriter(partial)
    writer.manifest = {
        "app_version": app_version(),
        "exported_at": timezone.now().isoformat(),
        "workspace": {
            "slug": workspace.slug,
            "name": workspace.name,
            "description": workspace.description[:500],
        },
        "vectors": vectors,
    }
    outermost = not connection.in_atomic_block
    try:
        with transaction.atomic():
            if outermost and connection.vendor == "postgresql":
                connection.cursor().execute(
                    "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"
                )
            counts = {
                table.label: writer.write_rows(table.label, _rows(workspace, table, vectors))
                for table in TABLES
            }
            result = ExportResult(path=output, counts=counts)
            _write_blobs(workspace, writer, result)
        writer.close()
        os.replace(partial, output)
    except BaseException:
        writer.abort()
        partial.unlink(missing_ok=True)
        raise
    return result


def _rows(workspace: Workspace, table: Table, vectors: bool) -> Any:
    fields = table.fields()
    columns = [f"{f.name}__username" if is_user(f) else f.attname for f in fields]
    query = (
        table.model._default_manager.filter(workspace=workspace)
        .order_by("pk")
        .values_list(*columns)
    )
    m2m = M2M_FIELDS.get(table.label, ())
    for values in query.iterator(chunk_size=_BATCH):
        row = {
            key_of(f): encode_value(f, value, vectors=vectors)
            for f, value in zip(fields, values, strict=True)
        }
        if m2m:
            row.update(_m2m(row["id"], m2m))
        yield row


def _m2m(pk: int, names: tuple[str, ...]) -> dict[str, list[int]]:
    relation_type = RelationType.objects.get(pk=pk)
    return {
        f"{name}_ids": sorted(getattr(relation_type, name).values_list("pk", flat=True))
        for name in names
    }


def _write_blobs(workspace: Workspace, writer: ArchiveWriter, result: ExportResult) -> None:
    """The original uploaded files, once per content (stored by content hash)."""
    names = (
        Document.objects.for_workspace(workspace)
        .exclude(blob="")
        .order_by("blob")
        .values_list("blob", flat=True)
        .distinct()
    )
    for name in names.iterator(chunk_size=_BATCH):
        sha256 = Path(name).name
        try:
            path = blob_path(name)
            if not _SHA256.match(sha256):
                raise FileNotFoundError(name)
            with path.open("rb") as handle:
                writer.write_blob(sha256, handle)
            result.blobs += 1
        except (OSError, ValueError) as exc:
            logger.warning("archive_blob_missing blob=%s error=%s", name, exc)
            result.blobs_missing.append(name)
