"""Deleting a workspace: every row of every tenant model and the blobs only it used go,
in batches, resumably; another workspace with the same content is untouched; the
workspace is missing to everyone from the moment deletion is asked for."""

from __future__ import annotations

import json
from collections import Counter
from io import StringIO
from pathlib import Path

import pytest
from django.apps import apps
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django_tasks_db.models import DBTaskResult

from agents.models import AgentCall
from ingest.actions.sources import do_create_upload_source
from ingest.models import Chunk, Document, Source
from knowledge.actions.curation.block import do_mark_not_same
from knowledge.actions.curation.entities import do_add_alias
from knowledge.models import (
    Alias,
    CommunitySummary,
    CurationEvent,
    CurationRule,
    Entity,
    LlmCall,
    Mention,
    Relation,
    RelationEvidence,
)
from tests.conftest import Member
from tests.knowledge.graph.projection import MEMORY_BACKEND, STORES, forget_graph_backends
from tests.llm_server import ScriptedLLM, World
from tests.support import run_pending
from workspaces.actions.workspaces import do_delete_workspace, do_request_workspace_deletion
from workspaces.errors import Conflict
from workspaces.models import ApiToken, Membership, Role, Workspace
from workspaces.tasks import delete_workspace

REPORT = (
    b"Captain Mara Voss repaired the harbour crane at Port Kestrel.\n\n"
    b"Port Kestrel hired Mara Voss after the storm; the Kestrel Harbour Board approved it.\n"
)
WORLD = World(
    entities={
        "Mara Voss": "person",
        "Port Kestrel": "location",
        "Kestrel Harbour Board": "organization",
    },
    relations=[("Mara Voss", "Port Kestrel", "works_at")],
)


def crash(**_: object) -> None:
    """A deletion hook standing for a worker killed between two hooks."""
    raise RuntimeError("worker killed")


@pytest.fixture(autouse=True)
def media_root(tmp_path, settings) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return Path(settings.MEDIA_ROOT)


@pytest.fixture
def llm(settings):
    from knowledge.extraction.extractors import reset_extractor

    with ScriptedLLM() as server:
        settings.LLM_BASE_URL = server.base_url
        settings.LLM_MODEL = "scripted-model"
        settings.LLM_API_KEY = "sk-test-secret"
        settings.EXTRACTION_OFFLINE = False
        server.responder = WORLD
        reset_extractor()
        yield server
    reset_extractor()


@pytest.fixture
def projection(settings):
    settings.GRAPH_BACKENDS = {"default": {"BACKEND": MEMORY_BACKEND}}
    forget_graph_backends()
    yield STORES
    forget_graph_backends()


def fill(member: Member) -> None:
    """Sources with blobs, chunks and vectors, an extracted graph with evidence, curation,
    a community summary and the agent call log, in `member`'s workspace."""
    ws = member.workspace
    source, _ = do_create_upload_source(
        workspace=ws,
        files=[("report.txt", [REPORT]), ("notes.md", [REPORT + b"\nAppendix.\n"])],
        enqueue=False,
    )
    run_pending(source)
    voss = Entity.objects.get(workspace=ws, name="Mara Voss")
    board = Entity.objects.get(workspace=ws, name="Kestrel Harbour Board")
    do_add_alias(workspace=ws, entity_id=voss.pk, name="Captain Voss", actor=member.user)
    do_mark_not_same(workspace=ws, entity_id=voss.pk, other_id=board.pk, actor=member.user)
    CommunitySummary.objects.create(
        workspace=ws, community=1, title="Harbour", summary="The harbour.", member_hash="x"
    )
    AgentCall.objects.create(
        workspace=ws, token=member.token, tool="search", transport="http", duration_ms=3, ok=True
    )


def tenant_counts(workspace_id: int) -> dict[str, int]:
    """Rows referring to the workspace, for every installed model with a `workspace` field
    (a model added later is counted without changing this test)."""
    counts: Counter[str] = Counter()
    for model in apps.get_models():
        if any(f.name == "workspace" for f in model._meta.concrete_fields):
            counts[model._meta.label] = model._base_manager.filter(
                workspace_id=workspace_id
            ).count()
    return dict(counts)


def blob_files(media_root: Path, workspace_id: int) -> dict[str, bytes]:
    root = media_root / "blobs" / str(workspace_id)
    return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def two_full_workspaces(llm, projection, make_member) -> tuple[Member, Member]:
    alice = make_member("alice", workspace="acme", role=Role.ADMIN)
    bob = make_member("bob", workspace="globex", role=Role.ADMIN)
    fill(alice)
    fill(bob)
    return alice, bob


def test_workspace_delete_leaves_no_rows_or_blobs(two_full_workspaces, media_root, projection):
    alice, bob = two_full_workspaces
    gone, kept = alice.workspace.pk, bob.workspace.pk
    before = tenant_counts(gone)
    filled = [Source, Document, Chunk, Entity, Relation, Mention, RelationEvidence]
    filled += [Alias, CurationEvent, CurationRule, LlmCall, CommunitySummary, AgentCall]
    filled += [ApiToken, Membership]
    for model in filled:
        assert before[model._meta.label] > 0, model
    assert Chunk.objects.filter(workspace_id=gone, embedding__isnull=False).exists()
    assert blob_files(media_root, gone)
    others_before, other_blobs = tenant_counts(kept), blob_files(media_root, kept)
    assert others_before == before  # identical content, so "untouched" means something

    do_request_workspace_deletion(workspace=alice.workspace, actor=alice.user)
    assert do_delete_workspace(workspace_id=gone, batch_size=7) is True

    assert not Workspace.objects.filter(pk=gone).exists()
    assert {label: n for label, n in tenant_counts(gone).items() if n} == {}
    assert not (media_root / "blobs" / str(gone)).exists()
    assert gone in projection["default"].cleared
    assert tenant_counts(kept) == others_before
    assert blob_files(media_root, kept) == other_blobs
    assert do_delete_workspace(workspace_id=gone) is False  # idempotent


def test_a_deletion_stopped_midway_is_finished_by_the_next_run(
    two_full_workspaces, media_root, settings
):
    alice, bob = two_full_workspaces
    gone, kept = alice.workspace.pk, bob.workspace.pk
    others_before = tenant_counts(kept)
    do_request_workspace_deletion(workspace=alice.workspace, actor=alice.user)
    hooks = list(settings.WORKSPACE_DELETION_HOOKS)
    settings.WORKSPACE_DELETION_HOOKS = [hooks[0], f"{__name__}.crash", *hooks[1:]]

    with pytest.raises(RuntimeError, match="worker killed"):
        do_delete_workspace(workspace_id=gone, batch_size=2)
    halfway = tenant_counts(gone)
    assert halfway["knowledge.Entity"] == 0 and halfway["ingest.Chunk"] > 0

    settings.WORKSPACE_DELETION_HOOKS = hooks
    assert do_delete_workspace(workspace_id=gone, batch_size=2) is True
    assert {label: n for label, n in tenant_counts(gone).items() if n} == {}
    assert not Workspace.objects.filter(pk=gone).exists()
    assert not (media_root / "blobs" / str(gone)).exists()
    assert tenant_counts(kept) == others_before


def test_only_admins_may_delete_a_workspace_through_the_api(make_member):
    admin = make_member("alice", workspace="acme", role=Role.ADMIN)
    editor = make_member("erin", workspace="acme", role=Role.EDITOR)
    viewer = make_member("vic", workspace="acme", role=Role.VIEWER)
    stranger = make_member("bob", workspace="globex", role=Role.ADMIN)

    for member in (editor, viewer):
        assert member.client().delete("/api/v1/workspaces/acme").status_code == 403
    assert stranger.client().delete("/api/v1/workspaces/acme").status_code == 404
    assert Workspace.objects.get(slug="acme").deletion_requested_at is None

    response = admin.client().delete("/api/v1/workspaces/acme")
    assert response.status_code == 202
    body = response.json()
    assert body["slug"] == "acme" and body["state"] == "deleting"
    assert body["deletion_requested_at"]
    assert Workspace.objects.get(slug="acme").state == "deleting"


def test_staff_signed_in_may_delete_a_workspace_they_do_not_belong_to(make_member):
    make_member("alice", workspace="acme", role=Role.ADMIN)
    staff = make_member("sam", workspace="globex", role=Role.VIEWER)
    staff.user.is_staff = True
    staff.user.save()
    client = Client(enforce_csrf_checks=False)
    client.force_login(staff.user)
    assert client.delete("/api/v1/workspaces/acme").status_code == 202
    # ... but not with a token, which acts only within its own workspace
    assert staff.client().delete("/api/v1/workspaces/globex").status_code == 403


def test_a_workspace_being_deleted_is_missing_to_everyone_and_in_no_list(make_member):
    admin = make_member("alice", workspace="acme", role=Role.ADMIN)
    editor = make_member("erin", workspace="acme", role=Role.EDITOR)
    assert admin.client().delete("/api/v1/workspaces/acme").status_code == 202

    for member in (admin, editor):
        client = member.client()
        assert client.get("/api/v1/workspaces/acme").status_code == 404
        assert client.get("/api/v1/workspaces/acme/sources").status_code == 404
        assert client.get("/api/v1/workspaces/acme/entities").status_code == 404
        assert client.delete("/api/v1/workspaces/acme").status_code == 404
    browser = Client()
    browser.force_login(admin.user)
    assert [w["slug"] for w in browser.get("/api/v1/workspaces").json()["items"]] == []
    assert browser.get("/api/v1/workspaces/acme").status_code == 404
    assert not Membership.objects.filter(workspace=admin.workspace).exists()


def test_the_command_deletes_in_the_foreground_after_confirmation(
    two_full_workspaces, media_root, monkeypatch
):
    alice, bob = two_full_workspaces
    others_before = tenant_counts(bob.workspace.pk)
    monkeypatch.setattr("builtins.input", lambda _prompt: "wrong")
    with pytest.raises(CommandError, match="Not confirmed"):
        call_command("workspace", "delete", "acme")
    assert Workspace.objects.get(slug="acme").deletion_requested_at is None

    out = StringIO()
    call_command("workspace", "delete", "acme", "--yes", "--batch-size", "5", stdout=out)
    assert "knowledge.Entity:" in out.getvalue()
    assert "deleted workspace 'acme'" in out.getvalue()
    assert not Workspace.objects.filter(slug="acme").exists()
    assert {label: n for label, n in tenant_counts(alice.workspace.pk).items() if n} == {}
    assert not ApiToken.objects.filter(workspace_id=alice.workspace.pk).exists()
    assert tenant_counts(bob.workspace.pk) == others_before


def test_the_api_hands_the_deletion_to_the_worker_whose_task_finishes_it(
    make_member, django_capture_on_commit_callbacks
):
    admin = make_member("alice", workspace="acme", role=Role.ADMIN)
    with django_capture_on_commit_callbacks(execute=True):
        assert admin.client().delete("/api/v1/workspaces/acme").status_code == 202
    queued = [t for t in DBTaskResult.objects.all() if t.task_path.endswith(".delete_workspace")]
    assert [t.args_kwargs["args"] for t in queued] == [[admin.workspace.pk]]

    assert delete_workspace.call(admin.workspace.pk) is True
    assert not Workspace.objects.filter(slug="acme").exists()
    assert delete_workspace.call(admin.workspace.pk) is False  # a repeated task is harmless


def test_a_workspace_being_deleted_is_missing_to_the_other_commands_until_delete_finishes(
    make_member,
):
    admin = make_member("alice", workspace="acme", role=Role.ADMIN)
    make_member("bob", workspace="globex", role=Role.ADMIN)
    do_request_workspace_deletion(workspace=admin.workspace, actor=admin.user)

    out = StringIO()
    call_command("workspace", "list", "--json", stdout=out)
    assert [row["slug"] for row in json.loads(out.getvalue())] == ["globex"]
    with pytest.raises(CommandError, match="not found"):
        call_command("workspace", "add-member", "--workspace", "acme", "alice", "--role", "admin")
    assert not Membership.objects.filter(workspace=admin.workspace).exists()

    call_command("workspace", "delete", "acme", stdout=StringIO())  # resumes: no question
    assert not Workspace.objects.filter(slug="acme").exists()


def test_only_a_workspace_marked_for_deletion_is_deleted(make_member):
    admin = make_member("alice", workspace="acme", role=Role.ADMIN)
    with pytest.raises(Conflict):
        do_delete_workspace(workspace_id=admin.workspace.pk)
    assert Workspace.objects.filter(slug="acme").exists()
