"""Archives that are not what they claim: refused with a message naming the problem (exit
code 1), and nothing written — no workspace, no rows, no files."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from knowledge.actions.workspace_archive import do_export_workspace, do_import_workspace
from knowledge.archive.format import ArchiveError, ArchiveReader
from knowledge.models import CurationEvent, Entity
from tests.knowledge.archive.conftest import rewrite_archive
from workspaces.models import Workspace

RELATIONS = "tables/knowledge.Relation.ndjson"


@pytest.fixture
def archive(curated, tmp_path) -> Path:
    return do_export_workspace(workspace=curated.workspace, output=tmp_path / "acme.zip").path


def refused(path: Path) -> str:
    """The import command's message for an archive it must refuse with exit code 1."""
    with pytest.raises(CommandError) as error:
        call_command("import_workspace", str(path), "--slug", "copy", stdout=io.StringIO())
    assert error.value.returncode == 1
    return str(error.value)


def nothing_written() -> bool:
    blobs = Path(settings.MEDIA_ROOT) / "blobs"
    leftovers = [p for p in blobs.iterdir() if p.name.startswith(".import-")]
    return (
        not Workspace.objects.filter(slug="copy").exists()
        and Entity.objects.exclude(workspace__slug="acme").count() == 0
        and not leftovers
    )


def test_a_file_that_is_no_zip_exits_1(curated, tmp_path):
    path = tmp_path / "junk.zip"
    path.write_bytes(b"PK\x03\x04 certainly not a zip archive" * 10)

    assert "not a readable zip archive" in refused(path)
    assert nothing_written()


def test_a_member_whose_bytes_changed_is_refused_by_its_checksum(archive):
    def corrupt(members: dict[str, bytes]) -> None:
        members[RELATIONS] = members[RELATIONS].replace(b"works_for", b"works_fer")

    message = refused(rewrite_archive(archive, corrupt, fix_manifest=False))

    assert "checksum differs" in message
    assert RELATIONS in message
    assert nothing_written()


def test_an_unknown_format_version_exits_1(archive):
    def future(members: dict[str, bytes]) -> None:
        manifest = json.loads(members["manifest.json"])
        manifest["version"] = manifest["format_version"] = 99
        members["manifest.json"] = json.dumps(manifest).encode()

    message = refused(rewrite_archive(archive, future))

    assert "format version 99 is not supported" in message
    assert nothing_written()


@pytest.mark.parametrize(
    "name",
    ["../../etc/evil", "/abs/evil", "blobs/../../evil", "blobs/" + "a" * 63 + "/", "x\\..\\y"],
)
def test_member_names_outside_the_layout_are_refused(archive, name):
    def smuggle(members: dict[str, bytes]) -> None:
        members[name] = b"payload"

    message = refused(rewrite_archive(archive, smuggle))

    assert "unexpected member name" in message
    assert nothing_written()
    assert not (Path(settings.MEDIA_ROOT).parent / "evil").exists()


def test_sizes_past_the_caps_are_refused_before_anything_is_inflated(archive):
    with pytest.raises(ArchiveError, match="member too large"):
        ArchiveReader(archive, max_member_bytes=100)
    with pytest.raises(ArchiveError, match="archive too large"):
        ArchiveReader(archive, max_total_bytes=1000)
    bomb = archive.with_name("bomb.zip")
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as target:
        target.writestr("manifest.json", b"{}")
        target.writestr("blobs/" + "0" * 64, b"\0" * (20 * 1024 * 1024))
    assert bomb.stat().st_size < 100_000
    with pytest.raises(ArchiveError, match="member too large"):
        do_import_workspace(archive=bomb, slug="copy", max_member_bytes=10 * 1024 * 1024)
    assert nothing_written()


def test_a_bad_row_late_in_the_archive_leaves_nothing_behind(archive):
    """Every table before the relations imports fine; one relation names an entity the
    archive does not hold: the whole import rolls back, the staged files go too."""

    def dangling(members: dict[str, bytes]) -> None:
        lines = members[RELATIONS].splitlines()
        row = json.loads(lines[-1])
        row["target_id"] = 987654321
        members[RELATIONS] = b"\n".join([*lines[:-1], json.dumps(row).encode()]) + b"\n"

    message = refused(rewrite_archive(archive, dangling))

    assert f"{RELATIONS} line" in message
    assert "target_id: required reference 987654321" in message
    assert nothing_written()


def test_a_value_its_field_does_not_allow_is_refused_with_its_line(archive):
    def hostile(members: dict[str, bytes]) -> None:
        lines = members[RELATIONS].splitlines()
        row = json.loads(lines[0])
        row["state"] = "<script>"
        members[RELATIONS] = b"\n".join([json.dumps(row).encode(), *lines[1:]]) + b"\n"

    message = refused(rewrite_archive(archive, hostile))

    assert f"{RELATIONS} line 1" in message
    assert "state" in message
    assert nothing_written()


def test_ids_in_event_payloads_that_name_no_archived_row_are_dropped(archive):
    """An id of the exporting instance could name an unrelated row here: never kept."""
    events = "tables/knowledge.CurationEvent.ndjson"

    def foreign(members: dict[str, bytes]) -> None:
        rows = [json.loads(line) for line in members[events].splitlines()]
        for row in rows:
            if row["action"] == "merge":
                row["payload"]["pair"] = [987654321, 10**40]
                row["payload"]["mentions"]["9" * 5000] = [1]
        members[events] = b"".join(json.dumps(row).encode() + b"\n" for row in rows)

    call_command(
        "import_workspace", str(rewrite_archive(archive, foreign)), "--slug", "copy",
        stdout=io.StringIO(),
    )  # fmt: skip

    merge = CurationEvent.objects.get(workspace__slug="copy", action="merge")
    assert merge.payload["pair"] == []
    assert len(merge.payload["mentions"]) == 1
