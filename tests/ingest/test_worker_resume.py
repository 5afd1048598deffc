"""A worker killed in the middle of a many-document source: a new worker finishes it with
exactly the documents and chunks of an uninterrupted run."""

from __future__ import annotations

import signal

import pytest
from django_tasks_db.models import DBTaskResult

from ingest.actions.sources import do_add_file, do_create_source, do_start_source
from ingest.models import Chunk, Document, DocumentStatus, Source
from tests.support import run_pending, start_worker, wait_for
from workspaces.actions.workspaces import do_create_workspace

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

# Enough documents that a worker killed after five still has most of them left.
DOCUMENTS = 24


def corpus() -> dict[str, bytes]:
    files = {}
    for n in range(DOCUMENTS):
        body = "\n\n".join(
            f"## Part {p}\n\n"
            + " ".join(
                f"Document {n} part {p} sentence {s} about topic {n % 7}." for s in range(12)
            )
            for p in range(4)
        )
        files[f"doc-{n:02}.md"] = f"# Document {n}\n\n{body}\n".encode()
    return files


def snapshot(source: Source) -> dict[str, list[tuple[int, str, int, int]]]:
    return {
        d.path: list(
            Chunk.objects.filter(document=d)
            .order_by("ordinal")
            .values_list("ordinal", "content_hash", "char_start", "char_end")
        )
        for d in Document.objects.filter(source=source).order_by("path")
    }


@pytest.mark.slow(reason="a worker killed mid-ingest")
def test_killed_worker_resumes_without_duplicates(tmp_path, settings):
    settings.MEDIA_ROOT = media_root = tmp_path / "media"
    files = corpus()

    reference_ws = do_create_workspace(slug="reference")
    reference = do_create_source(workspace=reference_ws, kind="upload", name="reference")
    for path, data in files.items():
        do_add_file(source=reference, path=path, chunks=[data])
    do_start_source(source=reference, enqueue=False)
    run_pending(reference)

    workspace = do_create_workspace(slug="resume")
    source = do_create_source(workspace=workspace, kind="upload", name="interrupted")
    for path, data in files.items():
        do_add_file(source=source, path=path, chunks=[data])
    do_start_source(source=source)  # enqueues a task per document for the worker

    first = start_worker("first", GRAPHLOOM_MEDIA_ROOT=str(media_root))
    try:
        wait_for(
            lambda: Document.objects.filter(source=source, status=DocumentStatus.DONE).count() >= 5,
            timeout=180,
            what="the first worker to finish some documents",
        )
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    done_when_killed = Document.objects.filter(source=source, status=DocumentStatus.DONE).count()
    assert done_when_killed < DOCUMENTS, "the worker finished before it could be interrupted"

    second = start_worker("second", GRAPHLOOM_MEDIA_ROOT=str(media_root))
    try:
        wait_for(
            lambda: Source.objects.get(pk=source.pk).status == "done",
            timeout=300,
            what="the second worker to finish the source",
        )
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=60)

    assert Document.objects.filter(source=source).count() == DOCUMENTS
    assert set(Document.objects.filter(source=source).values_list("status", flat=True)) == {"done"}
    assert snapshot(source) == snapshot(reference)
    assert not Chunk.objects.filter(document__source=source, embedding__isnull=True).exists()
    # The task the killed worker was running went back to the queue and finished.
    assert not DBTaskResult.objects.filter(status="RUNNING").exists()
