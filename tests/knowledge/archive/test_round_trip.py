"""Export a curated workspace, import it under a new slug: the same content, every id
new, every reference (rules, aliases, event payloads) on the right new row, the undo
working there as in the original, and the original untouched."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from ingest.models import Chunk, Document
from knowledge.actions.curation.merge import do_unmerge
from knowledge.actions.curation.relations import do_undo_relation_event
from knowledge.actions.workspace_archive import do_export_workspace, do_import_workspace
from knowledge.models import (
    CurationEvent,
    CurationRule,
    Entity,
    Mention,
    Relation,
    RelationEvidence,
    RelationRule,
)
from tests.knowledge.archive.conftest import content, entity
from workspaces.models import Membership, Workspace


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_import_recreates_the_exported_workspace_with_new_ids(curated, alice, tmp_path):
    before = content(curated.workspace)
    exported = do_export_workspace(workspace=curated.workspace, output=tmp_path / "acme.zip")

    result = do_import_workspace(archive=exported.path, slug="copy", owner=alice.user)

    copy = result.workspace
    assert content(copy) == before
    assert content(curated.workspace) == before  # the original untouched
    assert before["relation_rules"] and before["rules"] and before["aliases"]
    assert result.counts["knowledge.RelationEvidence"] == len(before["evidence"]) > 0
    for model in (Entity, Relation, Mention, RelationEvidence, CurationEvent, Chunk, Document):
        old = set(model.objects.for_workspace(curated.workspace).values_list("pk", flat=True))
        new = set(model.objects.for_workspace(copy).values_list("pk", flat=True))
        assert old and new and not old & new, model.__name__
    assert Membership.objects.get(workspace=copy).user == alice.user


def test_imported_rules_and_payloads_name_the_new_rows(curated, alice, tmp_path):
    exported = do_export_workspace(workspace=curated.workspace, output=tmp_path / "acme.zip")
    copy = do_import_workspace(archive=exported.path, slug="copy").workspace

    ada = entity(copy, "Ada Lovelace")
    augusta = Entity.objects.get(workspace=copy, name="Augusta Ada King")
    merge = CurationEvent.objects.get(workspace=copy, action="merge")
    assert merge.entity_id == ada.pk
    assert merge.payload["survivor"]["id"] == ada.pk
    assert [m["id"] for m in merge.payload["merged"]] == [augusta.pk]
    assert augusta.merged_into_id == ada.pk
    moved = merge.payload["mentions"][str(augusta.pk)]
    assert moved and set(moved) <= set(
        Mention.objects.filter(workspace=copy, entity=ada).values_list("pk", flat=True)
    )
    pin = CurationRule.objects.get(workspace=copy, kind="alias_pin", canonical="babbage")
    assert pin.entity_id == entity(copy, "Charles Babbage").pk
    suppress = RelationRule.objects.get(workspace=copy, outcome="suppress")
    assert (suppress.source_id, suppress.target_id) == (
        ada.pk,
        entity(copy, "Charles Babbage").pk,
    )
    assert suppress.relation.workspace_id == copy.pk
    assert suppress.event is not None
    assert suppress.event.workspace_id == copy.pk
    blob = Document.objects.get(workspace=copy).blob
    assert blob.startswith(f"blobs/{copy.pk}/")
    assert (Path(settings.MEDIA_ROOT) / blob).read_bytes() == (
        Path(settings.MEDIA_ROOT) / Document.objects.get(workspace=curated.workspace).blob
    ).read_bytes()


def test_undo_works_on_the_imported_decisions_as_on_the_originals(curated, tmp_path):
    exported = do_export_workspace(workspace=curated.workspace, output=tmp_path / "acme.zip")
    copy = do_import_workspace(archive=exported.path, slug="copy").workspace

    for workspace in (curated.workspace, copy):
        deletion = CurationEvent.objects.get(workspace=workspace, action="relation_delete")
        do_undo_relation_event(workspace=workspace, event_id=deletion.pk)
        merge = CurationEvent.objects.get(workspace=workspace, action="merge")
        do_unmerge(workspace=workspace, event_id=merge.pk)

    assert entity(copy, "Augusta Ada King").mention_count > 0
    assert Relation.objects.get(workspace=copy, type__name="works_for").state == "active"
    assert content(copy) == content(curated.workspace)


def test_embeddings_travel_unless_left_out(curated, tmp_path):
    embedded = Chunk.objects.for_workspace(curated.workspace).exclude(embedding=None)
    assert embedded.exists()
    bare = do_export_workspace(
        workspace=curated.workspace, output=tmp_path / "bare.zip", vectors=False
    )

    copy = do_import_workspace(archive=bare.path, slug="bare").workspace

    chunks = Chunk.objects.for_workspace(copy)
    assert chunks.count() == Chunk.objects.for_workspace(curated.workspace).count()
    assert not chunks.exclude(embedding=None).exists()
    assert set(chunks.values_list("embedding_dim", "embedding_model")) == {(None, "")}


def test_the_commands_round_trip_and_say_what_they_did(curated, tmp_path):
    archive = tmp_path / "acme.zip"
    out, _ = run("export_workspace", "acme", "-o", str(archive))
    assert f"Wrote {archive}" in out

    out, _ = run("import_workspace", str(archive), "--slug", "copy", "--owner", "alice")

    assert "Imported workspace 'copy'" in out
    copy = Workspace.objects.get(slug="copy")
    assert content(copy) == content(curated.workspace)
    assert Membership.objects.get(workspace=copy).user.username == "alice"


def test_the_commands_exit_2_on_usage_errors(curated, tmp_path):
    archive = tmp_path / "acme.zip"
    with pytest.raises(CommandError) as unknown:
        run("export_workspace", "nope", "-o", str(archive))
    assert unknown.value.returncode == 2
    run("export_workspace", "acme", "-o", str(archive))
    with pytest.raises(CommandError) as taken:
        run("import_workspace", str(archive), "--slug", "acme")
    assert taken.value.returncode == 2
    assert "already exists" in str(taken.value)
    with pytest.raises(CommandError) as malformed:
        run("import_workspace", str(archive), "--slug", "not a slug!")
    assert malformed.value.returncode == 2
    with pytest.raises(CommandError) as missing:
        run("import_workspace", str(tmp_path / "absent.zip"), "--slug", "copy")
    assert missing.value.returncode == 2
    assert not Workspace.objects.filter(slug="copy").exists()
