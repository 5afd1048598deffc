"""`manage.py source delete ID --workspace SLUG [--wait]`: through the deletion actions the
page and the API use; exit 0 done, 1 not found (another workspace's source too) with the
reason, 2 usage."""

from __future__ import annotations

import json
import subprocess
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django_tasks_db.models import DBTaskResult

from ingest.models import Chunk, Document, Source
from knowledge.models import Entity, Mention
from tests.knowledge.graph_data import make_graph
from tests.support import start_manage, subprocess_env

pytestmark = pytest.mark.django_db


def source_command(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("source", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_delete_asks_for_the_deletion_the_worker_carries_out(
    alice, django_capture_on_commit_callbacks
):
    built = make_graph(alice.workspace, entities={"Ada Lovelace": "person"}, title="Harbour")
    with django_capture_on_commit_callbacks(execute=True):
        out, err = source_command("delete", str(built.source.pk), "--workspace", "acme")
    assert json.loads(out) == {"source": built.source.pk, "name": "Harbour", "status": "deleting"}
    assert "deleting “Harbour” and everything derived from it" in err
    assert Source.objects.get(pk=built.source.pk).status == "deleting"
    queued = [t for t in DBTaskResult.objects.all() if t.task_path.endswith(".delete_source")]
    assert [t.args_kwargs["args"] for t in queued] == [[built.source.pk]]


def test_delete_wait_without_a_worker_deletes_it_and_what_it_gave_here(alice):
    built = make_graph(alice.workspace, entities={"Ada Lovelace": "person"}, title="Harbour")
    kept = make_graph(alice.workspace, entities={"Grace Hopper": "person"}, title="Kept")
    out, err = source_command("delete", str(built.source.pk), "--workspace", "acme", "--wait")
    assert json.loads(out)["status"] == "deleted"
    assert "no worker is running: deleting in this process" in err
    assert not Source.objects.filter(pk=built.source.pk).exists()
    assert not Document.objects.filter(source_id=built.source.pk).exists()
    assert not Chunk.objects.filter(pk=built.chunk.pk).exists()
    # The graph gave back its evidence (the deletion hooks ran): Ada went with it, Grace stays.
    assert list(Entity.objects.values_list("name", flat=True)) == ["Grace Hopper"]
    assert Mention.objects.filter(chunk=kept.chunk).count() == 1


def test_a_missing_or_another_workspaces_source_is_not_found_and_left_alone(alice, bob):
    theirs = make_graph(bob.workspace, entities={"Globex secret": "concept"}).source
    for source_id in (str(theirs.pk), "999999999"):
        with pytest.raises(CommandError) as refused:
            source_command("delete", source_id, "--workspace", "acme", "--wait")
        assert refused.value.returncode == 1
        assert str(refused.value) == f"Source {source_id} not found."
    assert Source.objects.get(pk=theirs.pk).status == "done"
    with pytest.raises(CommandError) as unknown:
        source_command("delete", str(theirs.pk), "--workspace", "nope")
    assert unknown.value.returncode == 2


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["source", "delete", "seven", "--workspace", "acme"], "invalid int value: 'seven'"),
        (["entity", "erase", "7", "--workspace", "acme"], "invalid choice: 'erase'"),
    ],
)
def test_bad_usage_exits_2_from_the_command_line(argv, said):
    """Checked by argparse before anything runs (a real process: only the command line's
    parser exits with 2; call_command raises CommandError instead)."""
    process = start_manage(
        *argv, env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    _out, err = process.communicate(timeout=60)
    assert process.returncode == 2, err
    assert said in err
