"""The archive file: a zip with manifest.json, tables/<app.Model>.ndjson and blobs/<sha256>.

Why a zip of NDJSON: each table is written and read one line at a time (a big workspace
never sits in memory), members are checked one by one against the manifest's SHA-256, and
any tool can look inside. The reader takes the file as hostile input: member names must
match one of three fixed patterns (no directories, no `..`, no absolute paths), declared
sizes are bounded before anything is decompressed (zipfile never inflates past the
declared size), each line is bounded, JSON is parsed with NaN and Infinity refused, and a
member whose bytes differ from the manifest's checksum is refused before the import
writes anything. Errors name the member and the line.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

FORMAT_NAME = "graphloom-workspace"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"

# Bounds of what a reader accepts (a caller may lower the two size caps: the API does).
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
MAX_LINE_BYTES = 64 * 1024 * 1024
MAX_MEMBER_BYTES = 64 * 1024 * 1024 * 1024
MAX_TOTAL_BYTES = 256 * 1024 * 1024 * 1024
MAX_MEMBERS = 1_000_000

_TABLE_MEMBER = re.compile(r"\Atables/([a-z_]{1,40}\.[A-Za-z]{1,60})\.ndjson\Z")
_BLOB_MEMBER = re.compile(r"\Ablobs/([0-9a-f]{64})\Z")
_COPY_BLOCK = 1024 * 1024


class ArchiveError(Exception):
    """The archive cannot be read: which member, which line, and why."""

    def __init__(self, message: str, *, member: str = "", line: int | None = None) -> None:
        where = member + (f" line {line}" if line is not None else "")
        super().__init__(f"{where}: {message}" if where else message)
        self.member, self.line = member, line


def table_member(label: str) -> str:
    return f"tables/{label}.ndjson"


def blob_member(sha256: str) -> str:
    return f"blobs/{sha256}"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def loads(text: str | bytes) -> Any:
    return json.loads(text, parse_constant=_reject_constant)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# --- Writing -------------------------------------------------------------------------------


@dataclass
class _Member:
    sha256: str
    size: int
    rows: int | None = None


@dataclass
class ArchiveWriter:
    """Writes members one after another, hashing as it goes; `close` adds the manifest."""

    path: Path
    manifest: dict[str, Any] = field(default_factory=dict)
    members: dict[str, _Member] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._zip = zipfile.ZipFile(
            self.path, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True
        )

    def write_rows(self, label: str, rows: Iterator[dict[str, Any]]) -> int:
        name = table_member(label)
        digest, size, count = hashlib.sha256(), 0, 0
        with self._zip.open(name, "w", force_zip64=True) as out:
            for row in rows:
                data = (dumps(row) + "\n").encode()
                digest.update(data)
                size += len(data)
                count += 1
                out.write(data)
        self.members[name] = _Member(digest.hexdigest(), size, count)
        return count

    def write_blob(self, sha256: str, source: IO[bytes]) -> bool:
        """Copy one stored file (once per content); ArchiveError when its bytes do not hash
        to `sha256`: the export fails rather than ship a file that is not what it says."""
        name = blob_member(sha256)
        if name in self.members:
            return True
        digest, size = hashlib.sha256(), 0
        with self._zip.open(name, "w", force_zip64=True) as out:
            while block := source.read(_COPY_BLOCK):
                digest.update(block)
                size += len(block)
                out.write(block)
        if digest.hexdigest() != sha256:
            raise ArchiveError("stored file does not match its content hash", member=name)
        self.members[name] = _Member(sha256, size)
        return True

    def close(self) -> dict[str, Any]:
        manifest = {
            **self.manifest,
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "format_version": FORMAT_VERSION,
            "counts": {
                name.removeprefix("tables/").removesuffix(".ndjson"): member.rows
                for name, member in self.members.items()
                if member.rows is not None
            },
            "members": {
                name: {"sha256": member.sha256, "size": member.size}
                for name, member in self.members.items()
            },
        }
        self._zip.writestr(MANIFEST, json.dumps(manifest, indent=2, sort_keys=True))
        self._zip.close()
        return manifest

    def abort(self) -> None:
        self._zip.close()


# --- Reading -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Manifest:
    app_version: str
    exported_at: str
    workspace: dict[str, str]
    vectors: bool
    counts: dict[str, int]
    members: dict[str, tuple[str, int]]  # name -> (sha256, size)


class ArchiveReader:
    """An archive opened for import: `verify()` checks everything before any row is read.

    The size caps bound what the members say they hold, summed and one by one, before a
    byte is inflated: a zip bomb is refused by its directory, not discovered on disk."""

    def __init__(
        self,
        path: Path,
        *,
        max_member_bytes: int = MAX_MEMBER_BYTES,
        max_total_bytes: int = MAX_TOTAL_BYTES,
    ) -> None:
        self.max_member_bytes, self.max_total_bytes = max_member_bytes, max_total_bytes
        try:
            self._zip = zipfile.ZipFile(path)
        except (OSError, zipfile.BadZipFile, ValueError) as exc:
            raise ArchiveError(f"not a readable zip archive ({exc})") from None
        try:
            self._infos = self._checked_infos()
            self.manifest = self._read_manifest()
        except BaseException:
            self._zip.close()
            raise

    def close(self) -> None:
        self._zip.close()

    def __enter__(self) -> ArchiveReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _checked_infos(self) -> dict[str, zipfile.ZipInfo]:
        infos = self._zip.infolist()
        if len(infos) > MAX_MEMBERS:
            raise ArchiveError(f"more than {MAX_MEMBERS} members")
        found: dict[str, zipfile.ZipInfo] = {}
        total = 0
        for info in infos:
            name = info.filename
            if not (name == MANIFEST or _TABLE_MEMBER.match(name) or _BLOB_MEMBER.match(name)):
                raise ArchiveError("unexpected member name (refused)", member=name[:300])
            if name in found:
                raise ArchiveError("member appears twice", member=name)
            if info.flag_bits & 0x1:
                raise ArchiveError("member is encrypted", member=name)
            if info.file_size > self.max_member_bytes:
                raise ArchiveError(
                    f"member too large ({info.file_size} bytes uncompressed, at most "
                    f"{self.max_member_bytes})",
                    member=name,
                )
            total += info.file_size
            if total > self.max_total_bytes:
                raise ArchiveError(
                    f"archive too large (more than {self.max_total_bytes} bytes uncompressed)"
                )
            found[name] = info
        if MANIFEST not in found:
            raise ArchiveError("no manifest.json: not a workspace archive")
        return found

    def _read_manifest(self) -> Manifest:
        info = self._infos[MANIFEST]
        if info.file_size > MAX_MANIFEST_BYTES:
            raise ArchiveError("manifest too large", member=MANIFEST)
        try:
            data = loads(self._zip.read(MANIFEST))
        except (ValueError, RecursionError, zipfile.BadZipFile, OSError, zlib.error) as exc:
            raise ArchiveError(f"unreadable JSON ({exc})", member=MANIFEST) from None
        if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
            raise ArchiveError(f"not a {FORMAT_NAME} archive", member=MANIFEST)
        version = data.get("version", data.get("format_version"))
        if version != FORMAT_VERSION or data.get("format_version", version) != version:
            raise ArchiveError(
                f"format version {str(version)[:20]} is not supported "
                f"(this instance reads version {FORMAT_VERSION})",
                member=MANIFEST,
            )
        return Manifest(
            app_version=_text(data.get("app_version", "")),
            exported_at=_text(data.get("exported_at", "")),
            workspace={k: _text(v) for k, v in _mapping(data.get("workspace", {})).items()},
            vectors=data.get("vectors") is True,
            counts={k: _count(v) for k, v in _mapping(data.get("counts", {})).items()},
            members=_members(data.get("members")),
        )

    def verify(self) -> None:
        """Every member listed and present, and every byte as the manifest says."""
        listed = set(self.manifest.members)
        present = set(self._infos) - {MANIFEST}
        for name in sorted(present - listed):
            raise ArchiveError("member not listed in the manifest", member=name)
        for name in sorted(listed - present):
            raise ArchiveError("member listed in the manifest is missing", member=name)
        for name in sorted(listed):
            sha256, size = self.manifest.members[name]
            if self._infos[name].file_size != size:
                raise ArchiveError("size differs from the manifest", member=name)
            digest = hashlib.sha256()
            with self._open(name) as handle:
                for block in _blocks(handle, name):
                    digest.update(block)
            if digest.hexdigest() != sha256:
                raise ArchiveError("checksum differs from the manifest (corrupt)", member=name)

    def _open(self, name: str) -> IO[bytes]:
        try:
            return self._zip.open(self._infos[name])
        except (zipfile.BadZipFile, OSError, NotImplementedError) as exc:
            raise ArchiveError(f"cannot be read ({exc})", member=name) from None

    def has_table(self, label: str) -> bool:
        return table_member(label) in self._infos

    def rows(self, label: str) -> Iterator[tuple[int, dict[str, Any]]]:
        """(line number, row) of a table member; an absent table has no rows."""
        name = table_member(label)
        if name not in self._infos:
            return
        with self._open(name) as handle:
            number = 0
            while True:
                try:
                    line = handle.readline(MAX_LINE_BYTES + 1)
                except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as exc:
                    raise ArchiveError(f"cannot be read ({exc})", member=name) from None
                if not line:
                    return
                number += 1
                if len(line) > MAX_LINE_BYTES:
                    raise ArchiveError("line too long", member=name, line=number)
                try:
                    row = loads(line)
                except (ValueError, UnicodeDecodeError, RecursionError) as exc:
                    raise ArchiveError(f"invalid JSON ({exc})", member=name, line=number) from None
                if not isinstance(row, dict):
                    raise ArchiveError("a row must be a JSON object", member=name, line=number)
                yield number, row

    def blob_names(self) -> list[str]:
        return sorted(
            name.removeprefix("blobs/") for name in self._infos if _BLOB_MEMBER.match(name)
        )

    def open_blob(self, sha256: str) -> IO[bytes]:
        return self._open(blob_member(sha256))


def _blocks(handle: IO[bytes], name: str) -> Iterator[bytes]:
    """A member's bytes in blocks; a damaged member (bad CRC, truncated) is an ArchiveError."""
    while True:
        try:
            block = handle.read(_COPY_BLOCK)
        except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as exc:
            raise ArchiveError(f"cannot be read ({exc})", member=name) from None
        if not block:
            return
        yield block


def copy_blob(reader: ArchiveReader, sha256: str, out: IO[bytes]) -> int:
    """Copy one blob member to `out`, checking its bytes hash to its name; returns its size."""
    name = blob_member(sha256)
    digest, size = hashlib.sha256(), 0
    with reader.open_blob(sha256) as handle:
        for block in _blocks(handle, name):
            digest.update(block)
            size += len(block)
            out.write(block)
    if digest.hexdigest() != sha256:
        raise ArchiveError("content does not match its name (corrupt)", member=name)
    return size


def _text(value: object) -> str:
    if not isinstance(value, str) or len(value) > 500:
        raise ArchiveError("a text field of the manifest is not a short string", member=MANIFEST)
    return value


def _count(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ArchiveError("a count is not a non-negative integer", member=MANIFEST)
    return value


def _mapping(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ArchiveError("expected an object", member=MANIFEST)
    return value


def _members(value: object) -> dict[str, tuple[str, int]]:
    members: dict[str, tuple[str, int]] = {}
    for name, entry in _mapping(value).items():
        if not isinstance(entry, dict):
            raise ArchiveError(f"member entry {name[:100]!r} is not an object", member=MANIFEST)
        sha256 = entry.get("sha256")
        if not isinstance(sha256, str) or not re.fullmatch(r"[0-9a-f]{64}", sha256):
            raise ArchiveError(f"member {name[:100]!r} has no valid sha256", member=MANIFEST)
        members[name] = (sha256, _count(entry.get("size")))
    return members
