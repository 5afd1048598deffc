"""Export a workspace to one archive file, and import one as a new workspace
(knowledge/archive/ holds the format; this is the write and its guarantees).

The import is all or nothing: the archive is checked whole (every member against the
manifest's checksums) before anything is written, its rows go in in one transaction, and
its files are first copied into a staging directory under MEDIA_ROOT and moved into the
new workspace's place only at the end of that transaction; a failure at any point
removes both. Embeddings travel with the rows (nothing is recomputed); the vector
indexes of the dimensions found are ensured. The imported workspace's importer, if
given, becomes its first admin: memberships do not travel.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import DatabaseError, transaction

from ingest.actions.embeddings import do_ensure_vector_index
from knowledge.actions.embeddings import do_ensure_entity_vector_index
from knowledge.archive.export import ExportResult, export_workspace
from knowledge.archive.format import (
    MAX_MEMBER_BYTES,
    MAX_TOTAL_BYTES,
    ArchiveError,
    ArchiveReader,
    blob_member,
    copy_blob,
)
from knowledge.archive.importer import RowImporter, blob_target
from workspaces.actions.workspaces import do_create_workspace
from workspaces.errors import Conflict
from workspaces.models import Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)


@dataclass
class ImportResult:
    workspace: Workspace
    counts: dict[str, int]
    blobs: int = 0
    dimensions: dict[str, list[int]] = field(default_factory=dict)


def do_export_workspace(
    *, workspace: Workspace, output: Path, vectors: bool = True
) -> ExportResult:
    """Write `workspace` to the zip `output` (replaced only once it is complete)."""
    return export_workspace(workspace, output=Path(output), vectors=vectors)


def do_import_workspace(
    *,
    archive: Path,
    slug: str,
    name: str = "",
    owner: User | None = None,
    max_member_bytes: int = MAX_MEMBER_BYTES,
    max_total_bytes: int = MAX_TOTAL_BYTES,
) -> ImportResult:
    """Create workspace `slug` from the archive at `archive`. ArchiveError: the file is not
    a workspace archive this instance reads (nothing written); Conflict / InvalidInput:
    the slug is taken or malformed."""
    slug = slug.strip().lower()  # as do_create_workspace takes it (and validates it)
    if Workspace.objects.filter(slug=slug).exists():
        raise Conflict(f"A workspace with slug {slug!r} already exists.")
    with ArchiveReader(
        Path(archive), max_member_bytes=max_member_bytes, max_total_bytes=max_total_bytes
    ) as reader:
        reader.verify()
        with _staged_blobs(reader) as staged:
            return _import(reader, staged, slug=slug, name=name, owner=owner)


def _import(
    reader: ArchiveReader, staged: dict[str, Path], *, slug: str, name: str, owner: User | None
) -> ImportResult:
    placed: list[Path] = []
    try:
        with transaction.atomic():
            described = reader.manifest.workspace
            workspace = do_create_workspace(
                slug=slug,
                name=name or described.get("name", "") or slug,
                description=described.get("description", ""),
                owner=owner,
            )
            rows = RowImporter(reader, workspace, set(staged)).run()
            for dim in sorted(rows.dimensions.get("ingest.Chunk", ())):
                do_ensure_vector_index(dimension=dim)
            for dim in sorted(rows.dimensions.get("knowledge.Entity", ())):
                do_ensure_entity_vector_index(dimension=dim)
            _place_blobs(workspace, staged, placed)
    except DatabaseError as exc:
        _unplace(placed)
        message = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise ArchiveError(f"the database refused the archive's rows ({message})") from exc
    except BaseException:
        _unplace(placed)
        raise
    logger.info(
        "workspace_imported slug=%s rows=%d blobs=%d",
        workspace.slug, sum(rows.counts.values()), len(placed),
    )  # fmt: skip
    return ImportResult(
        workspace=workspace,
        counts=rows.counts,
        blobs=len(placed),
        dimensions={label: sorted(dims) for label, dims in rows.dimensions.items()},
    )


@contextmanager
def _staged_blobs(reader: ArchiveReader) -> Iterator[dict[str, Path]]:
    """The archive's files copied (and hash-checked) into a staging directory on the
    media volume, so the final move is a rename; removed whatever happens."""
    root = Path(settings.MEDIA_ROOT) / "blobs"
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=root, prefix=".import-"))
    try:
        staged: dict[str, Path] = {}
        for sha256 in reader.blob_names():
            if reader.manifest.members[blob_member(sha256)][0] != sha256:
                raise ArchiveError("checksum differs from its name", member=blob_member(sha256))
            path = staging / sha256
            with path.open("wb") as out:
                copy_blob(reader, sha256, out)
            staged[sha256] = path
        yield staged
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _place_blobs(workspace: Workspace, staged: dict[str, Path], placed: list[Path]) -> None:
    for sha256, path in staged.items():
        final = Path(settings.MEDIA_ROOT) / blob_target(workspace, sha256)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, final)
        placed.append(final)


def _unplace(placed: list[Path]) -> None:
    for path in placed:
        path.unlink(missing_ok=True)
