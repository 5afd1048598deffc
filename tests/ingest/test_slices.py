"""Work in bounded slices: sources take turns, a cancel or a SIGTERM stops the slice in
flight, what is left goes back to the queue, and a slice that fails outright does not
strand its documents (ingest/actions/slices.py, ingest/dispatch.py, system/worker.py)."""

from __future__ import annotations

import signal
from datetime import timedelta

import pytest
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from ingest.actions.slices import do_process_slice
from ingest.actions.sources import (
    do_add_file,
    do_cancel_source,
    do_create_source,
    do_create_text_source,
    do_start_source,
)
from ingest.dispatch import INTERACTIVE_PRIORITY, PIPELINE_TASK, SLICE_PRIORITY, enqueue_documents
from ingest.hooks import requeue_stranded_work
from ingest.models import PENDING, Chunk, Document, DocumentStatus, Source
from tests.support import start_worker, stop_process, wait_for
from tests.system.sample_tasks import sleep_for
from workspaces.actions.workspaces import do_create_workspace, do_request_workspace_deletion

pytestmark = pytest.mark.django_db(transaction=True)


def long_document(number: int, sections: int = 40) -> bytes:
    """Markdown of many chunks; every line is unique, so no text counts as boilerplate."""
    body = "\n\n".join(
        f"## Section {number}.{s}\n\n"
        + " ".join(
            f"Paragraph {s} of document {number} says thing {w} about item {number * 1000 + s}."
            for w in range(30)
        )
        for s in range(sections)
    )
    return f"# Long document {number}\n\n{body}\n".encode()


def make_upload(workspace, name: str, files: dict[str, bytes]) -> Source:
    source = do_create_source(workspace=workspace, kind="upload", name=name)
    for path, data in files.items():
        do_add_file(source=source, path=path, chunks=[data])
    return source


def large_upload(workspace) -> Source:
    """Two documents of about a hundred chunks each: the first one's embedding lasts long
    enough for a test to see it under way (its chunks are embedded a batch of 32 at a
    time), with checkpoints to stop at, and the second is work left behind it. Twelve
    sections a document made the embedding too short to be seen on an idle machine; four
    documents cost twice the time and showed nothing more."""
    return make_upload(workspace, "large", {f"big-{n}.md": long_document(n) for n in range(2)})


def ready_pipeline_tasks(source: Source):
    return DBTaskResult.objects.filter(
        status=TaskResultStatus.READY,
        task_path=PIPELINE_TASK,
        args_kwargs__kwargs__source_id=source.pk,
    )


def embedding_under_way(source: Source) -> bool:
    """Some of the source's chunks are embedded and some are not yet. Read from the chunks,
    which a slice writes per batch, not from the source's activity: that is throttled to a
    write a second and cleared when a slice ends, so on a fast machine a short slice's
    progress could come and go between two looks."""
    chunks = Chunk.objects.filter(document__source=source)
    return chunks.filter(embedding__isnull=False).exists() and (
        chunks.filter(embedding__isnull=True).exists()
    )


# --- the order of the queue ---------------------------------------------------------------


def test_sources_take_turns_and_an_uploads_first_slice_goes_first():
    workspace = do_create_workspace(slug="turns")
    served = make_upload(workspace, "served", {"a.md": b"# A\n\nAlpha text.\n"})
    waiting = make_upload(workspace, "waiting", {"b.md": b"# B\n\nBeta text.\n"})
    Source.objects.filter(pk=served.pk).update(last_slice_at=timezone.now())
    # Both are the rest of earlier slices: no priority, the turn decides.
    enqueue_documents(
        Document.objects.filter(source=served).values_list("pk", flat=True), continuation=True
    )
    enqueue_documents(
        Document.objects.filter(source=waiting).values_list("pk", flat=True), continuation=True
    )
    first = DBTaskResult.objects.ready()[0]
    assert first.args_kwargs["kwargs"]["source_id"] == waiting.pk

    # A new upload's first slice goes before both.
    fresh = make_upload(workspace, "fresh", {"c.md": b"# C\n\nGamma text.\n"})
    do_start_source(source=fresh)
    first = DBTaskResult.objects.ready()[0]
    assert first.args_kwargs["kwargs"]["source_id"] == fresh.pk
    assert first.priority == INTERACTIVE_PRIORITY

    # Serving the waiting source sends it to the back: the served one is next among the rest.
    first_of_waiting = ready_pipeline_tasks(waiting).get()
    do_process_slice(document_ids=first_of_waiting.args_kwargs["args"][0], source_id=waiting.pk)
    first_of_waiting.delete()  # what the worker's claim would have done
    assert Document.objects.get(source=waiting).status == DocumentStatus.DONE
    order = [t.args_kwargs["kwargs"]["source_id"] for t in DBTaskResult.objects.ready()]
    assert order == [fresh.pk, served.pk]


def test_a_sources_other_waiting_slices_lose_the_first_slice_priority_when_it_is_served():
    workspace = do_create_workspace(slug="demote")
    files = {f"d{n}.md": f"# D{n}\n\nText number {n}.\n".encode() for n in range(3)}
    source = make_upload(workspace, "many", files)
    do_start_source(source=source)
    do_start_source(source=source)  # as a second upload into the same source would
    tasks = list(ready_pipeline_tasks(source))
    assert len(tasks) == 2
    assert {t.priority for t in tasks} == {INTERACTIVE_PRIORITY}
    do_process_slice(document_ids=tasks[0].args_kwargs["args"][0], source_id=source.pk)
    assert ready_pipeline_tasks(source).get(pk=tasks[1].pk).priority == SLICE_PRIORITY


# --- a slice whose time is up, or that fails outright -------------------------------------


def test_a_slice_whose_time_is_up_queues_the_rest_and_a_later_slice_finishes(settings):
    settings.INGEST_SLICE_SECONDS = 0  # every checkpoint ends the slice
    workspace = do_create_workspace(slug="budget")
    source = make_upload(workspace, "long", {"long.md": long_document(1)})
    do_start_source(source=source, enqueue=False)
    ids = list(Document.objects.filter(source=source).values_list("pk", flat=True))
    slices_run = 0
    while Document.objects.filter(source=source, status__in=PENDING).exists():
        assert slices_run < 50, "the slices made no progress"
        do_process_slice(document_ids=ids, source_id=source.pk)
        slices_run += 1
        # The rest was queued as a new task of the same source.
        queued = list(ready_pipeline_tasks(source))
        if Document.objects.filter(source=source, status__in=PENDING).exists():
            assert len(queued) == 1 and queued[0].args_kwargs["args"][0] == ids
        DBTaskResult.objects.filter(pk__in=[t.pk for t in queued]).delete()
    assert slices_run >= 2, "a zero-second slice should stop at the second embedding batch"
    chunks = Chunk.objects.filter(document__source=source)
    assert chunks.count() > 64 and not chunks.filter(embedding__isnull=True).exists()
    source.refresh_from_db()
    assert source.status == "done" and source.activity == {}


def two_started_documents(slug: str) -> tuple[Source, list[int]]:
    """A started upload of two short documents in a new workspace, and their ids."""
    workspace = do_create_workspace(slug=slug)
    source = make_upload(
        workspace, "two", {"a.md": b"# A\n\nFirst text.\n", "b.md": b"# B\n\nSecond text.\n"}
    )
    do_start_source(source=source, enqueue=False)
    return source, sorted(Document.objects.filter(source=source).values_list("pk", flat=True))


def test_a_slice_that_fails_outright_is_retried_then_fails_its_documents(settings):
    settings.INGEST_PIPELINE_STAGES = [
        *settings.INGEST_PIPELINE_STAGES,
        "tests.ingest.sample_stages.broken_group_step",
    ]
    settings.INGEST_SLICE_ATTEMPTS = 2
    source, ids = two_started_documents("broken")

    do_process_slice(document_ids=ids, source_id=source.pk)
    assert set(Document.objects.filter(pk__in=ids).values_list("status", flat=True)) <= set(PENDING)
    retry = ready_pipeline_tasks(source).get()
    assert retry.args_kwargs["kwargs"]["attempt"] == 1
    assert retry.run_after > timezone.now() + timedelta(seconds=5)

    do_process_slice(document_ids=ids, source_id=source.pk, attempt=1)
    failed = Document.objects.filter(pk__in=ids, status=DocumentStatus.FAILED)
    assert failed.count() == 2
    assert "Processing failed 2 times: RuntimeError: the group step broke" in failed[0].error
    assert ready_pipeline_tasks(source).count() == 1  # only the first retry, nothing more
    source.refresh_from_db()
    assert source.status == "failed"


def test_waiting_work_without_a_task_is_queued_again_once():
    workspace = do_create_workspace(slug="stranded")
    stranded = make_upload(workspace, "stranded", {"a.md": b"# A\n\nWaiting text.\n"})
    recent = make_upload(workspace, "recent", {"b.md": b"# B\n\nJust started.\n"})
    do_start_source(source=stranded, enqueue=False)  # running, and no task to run it
    do_start_source(source=recent, enqueue=False)
    Source.objects.filter(pk=stranded.pk).update(started_at=timezone.now() - timedelta(hours=1))

    outcome = requeue_stranded_work()
    assert outcome.kind == "ok" and outcome.details == {"sources": {str(stranded.pk): 1}}
    task = ready_pipeline_tasks(stranded).get()
    assert task.args_kwargs["args"][0] == list(
        Document.objects.filter(source=stranded).values_list("pk", flat=True)
    )
    assert not ready_pipeline_tasks(recent).exists()  # it may still be on its way
    # Once queued, it has a task: a second run queues nothing more.
    assert requeue_stranded_work().details == {}
    assert ready_pipeline_tasks(stranded).count() == 1


# --- one real worker --------------------------------------------------------------------


@pytest.mark.slow(reason="a real worker ingesting a large source")
def test_a_small_upload_finishes_while_a_large_source_runs_with_one_worker(media_root):
    workspace = do_create_workspace(slug="fair")
    large = large_upload(workspace)
    do_start_source(source=large)
    worker = start_worker("fair", GRAPHLOOM_MEDIA_ROOT=str(media_root), GRAPHLOOM_SLICE_SECONDS="2")
    try:
        wait_for(lambda: embedding_under_way(large), timeout=180, what="the large source's slice")
        small, _ = do_create_text_source(
            workspace=workspace, title="Small note", text="# Small\n\nA short note about Ada."
        )
        wait_for(
            lambda: Source.objects.get(pk=small.pk).status == "done",
            timeout=180,
            what="the small source to finish",
        )
        assert Document.objects.filter(source=large, status__in=PENDING).exists(), (
            "the large source finished first: nothing showed the small one overtaking it"
        )
        wait_for(
            lambda: Source.objects.get(pk=large.pk).status == "done",
            timeout=600,
            what="the large source to finish after it",
        )
    finally:
        stop_process(worker)
    assert not Chunk.objects.filter(document__source=large, embedding__isnull=True).exists()
    assert set(Document.objects.filter(source=large).values_list("status", flat=True)) == {"done"}


@pytest.mark.slow(reason="real worker")
def test_cancel_stops_the_running_slice_within_seconds(media_root):
    workspace = do_create_workspace(slug="cancel")
    source = large_upload(workspace)
    do_start_source(source=source)
    worker = start_worker(
        "cancel", GRAPHLOOM_MEDIA_ROOT=str(media_root), GRAPHLOOM_SLICE_SECONDS="600"
    )
    try:
        wait_for(lambda: embedding_under_way(source), timeout=180, what="the slice to embed")
        do_cancel_source(source=source)
        # The slice in flight notices at its next embedding batch, not after the source.
        wait_for(
            lambda: not DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING).exists(),
            timeout=30,
            what="the running slice to stop after the cancel",
        )
        embedded = Chunk.objects.filter(document__source=source, embedding__isnull=False)
        stopped_at = embedded.count()
        assert 0 < stopped_at < Chunk.objects.filter(document__source=source).count()
        assert set(Document.objects.filter(source=source).values_list("status", flat=True)) == {
            "cancelled"
        }
        assert not ready_pipeline_tasks(source).exists()
    finally:
        stop_process(worker)
    assert embedded.count() == stopped_at


def test_a_slice_of_a_workspace_being_deleted_stops_and_queues_nothing(alice):
    source, ids = two_started_documents("leaving")
    do_request_workspace_deletion(workspace=source.workspace, actor=alice.user)

    do_process_slice(document_ids=ids, source_id=source.pk)

    # Nothing was written for it that the purge (running meanwhile) could miss.
    assert set(Document.objects.filter(pk__in=ids).values_list("status", flat=True)) == {
        DocumentStatus.CANCELLED
    }
    assert not Chunk.objects.filter(document__source=source).exists()
    assert not ready_pipeline_tasks(source).exists()


@pytest.mark.slow(reason="real worker processes, a grace period waited out")
def test_sigterm_hands_the_slice_back_and_exits_0(media_root):
    workspace = do_create_workspace(slug="sigterm")
    source = large_upload(workspace)
    do_start_source(source=source)
    env = {"GRAPHLOOM_MEDIA_ROOT": str(media_root), "GRAPHLOOM_SLICE_SECONDS": "600"}
    first = start_worker("sigterm-1", **env)
    try:
        wait_for(lambda: embedding_under_way(source), timeout=180, what="the slice to embed")
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=10) == 0
    finally:
        if first.poll() is None:
            first.kill()
    assert not DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING).exists()
    rest = ready_pipeline_tasks(source).get()
    pending = set(
        Document.objects.filter(source=source, status__in=PENDING).values_list("pk", flat=True)
    )
    assert pending and set(rest.args_kwargs["args"][0]) == pending
    assert not Document.objects.filter(source=source, status="failed").exists()

    second = start_worker("sigterm-2", **env)
    try:
        wait_for(
            lambda: Source.objects.get(pk=source.pk).status == "done",
            timeout=600,
            what="a second worker to finish the source",
        )
    finally:
        stop_process(second)
    assert not Chunk.objects.filter(document__source=source, embedding__isnull=True).exists()


@pytest.mark.slow
def test_sigterm_during_a_task_that_is_not_sliced_hands_it_back_and_exits_0():
    task = DBTaskResult.objects.get(pk=sleep_for.enqueue(120).id)
    worker = start_worker("unsliced", GRAPHLOOM_WORKER_STOP_GRACE_SECONDS="1")
    try:
        wait_for(
            lambda: DBTaskResult.objects.get(pk=task.pk).status == TaskResultStatus.RUNNING,
            timeout=120,
            what="the worker to start the task",
        )
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=10) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
    assert DBTaskResult.objects.get(pk=task.pk).status == TaskResultStatus.READY
