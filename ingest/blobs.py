"""Raw files of uploaded documents, stored by content hash under MEDIA_ROOT.

Why content-addressed: the same file uploaded twice (or into two sources) is stored once,
its hash is the change detector for re-ingestion, and the worker (maybe on another machine
sharing the media volume) reads exactly the bytes that were accepted.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings


@dataclass(frozen=True, slots=True)
class StoredBlob:
    name: str  # relative to MEDIA_ROOT
    sha256: str
    size: int


def _root() -> Path:
    return Path(settings.MEDIA_ROOT)


def blob_path(name: str) -> Path:
    path = (_root() / name).resolve()
    if _root().resolve() not in path.parents:
        raise ValueError(f"blob name escapes MEDIA_ROOT: {name!r}")
    return path


def store_blob(*, workspace_id: int, chunks: Iterable[bytes]) -> StoredBlob:
    """Stream `chunks` to disk, hashing as they come; identical content is stored once."""
    directory = _root() / "blobs" / str(workspace_id)
    directory.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=".incoming-")
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
        sha = digest.hexdigest()
        name = f"blobs/{workspace_id}/{sha[:2]}/{sha}"
        final = _root() / name
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp_name, final)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return StoredBlob(name=name, sha256=sha, size=size)


def read_blob(name: str) -> bytes:
    return blob_path(name).read_bytes()


def delete_blobs(names: Iterable[str]) -> None:
    for name in names:
        if name:
            blob_path(name).unlink(missing_ok=True)
