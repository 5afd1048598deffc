"""Embedding ahead (ingest/embedding_lane.py): a group's chunk vectors computed on a
background thread while the main thread goes on, each computed once (of the chunk's indexed
text), matched to chunks by the hash of that text, taken over by the caller when the lane
is behind, and stopped by a cancel or a worker's shutdown."""

from __future__ import annotations

import math
import time

import pytest

from ingest import embedding_lane
from ingest.actions.pipeline import do_process_documents
from ingest.actions.sources import do_start_source
from ingest.embedding_lane import JOB_TEXTS, AheadChunk, EmbeddingLane, get_lane
from ingest.indexed_text import indexed_text
from ingest.models import Chunk, Document, DocumentStatus
from system import slices
from tests.ingest import sample_stages

pytestmark = pytest.mark.django_db


def handbook(topic: str, sections: int) -> bytes:
    body = [f"# {topic} handbook\n"]
    for i in range(sections):
        text = " ".join(f"The {topic} rule {i} says step {j} comes first." for j in range(16))
        body.append(f"## {topic} part {i}\n\n{text}\n")
    return "\n".join(body).encode()


@pytest.fixture
def lane(embedder):
    made = EmbeddingLane(embedder.twin(), keep=4)
    yield made
    made.close()


def close_to(a: list[float], b: list[float]) -> bool:
    return all(math.isclose(x, y, abs_tol=1e-4) for x, y in zip(a, b, strict=True))


def lane_started(lane: EmbeddingLane, document_id: int) -> bool:
    """Whether the lane has taken up the document's first job (a job not started yet is the
    caller's to compute, and would not be waited for)."""
    job = lane._documents[document_id][0]
    return job.future.running() or job.future.done()


def never_stop() -> None:
    return None


def test_a_group_is_embedded_ahead_each_chunk_once_with_the_models_vectors(
    make_source, embedder, settings
):
    settings.INGEST_EMBED_AHEAD = True
    source = make_source({f"{t}.md": handbook(t, 3) for t in ("tax", "audit", "payroll")})
    do_start_source(source=source, enqueue=False)
    ids = sorted(Document.objects.filter(source=source).values_list("pk", flat=True))
    process_lane = get_lane()
    assert process_lane is not None
    ahead, encoded = process_lane.texts_done, embedder.texts_encoded

    assert do_process_documents(document_ids=ids) == ["done"] * 3

    chunks = list(Chunk.objects.filter(document__source=source))
    assert len(chunks) >= 9
    assert embedder.texts_encoded - encoded == len(chunks)  # each chunk once, lane or not
    assert process_lane.texts_done - ahead > 0  # the lane computed some of them
    assert any(chunk.context for chunk in chunks)
    for chunk in chunks:
        assert chunk.embedding is not None
        # Of its indexed text: its handbook's title and its part before its own text.
        indexed = indexed_text(
            title=chunk.document.title,
            heading_path=chunk.heading_path,
            text=chunk.text,
            counter=embedder.counter,
            budget=embedder.chunk_token_budget,
        )
        assert close_to(list(chunk.embedding), embedder.encode([indexed.text])[0])


def test_with_embedding_ahead_off_the_group_is_embedded_in_one_call(make_source, settings):
    settings.INGEST_EMBED_AHEAD = False
    assert get_lane() is None
    source = make_source({f"{t}.md": handbook(t, 2) for t in ("tax", "audit")})
    do_start_source(source=source, enqueue=False)
    ids = sorted(Document.objects.filter(source=source).values_list("pk", flat=True))
    assert do_process_documents(document_ids=ids) == ["done"] * 2
    assert not Chunk.objects.filter(document__source=source, embedding=None).exists()


def test_a_vector_sent_ahead_is_used_only_for_the_text_it_was_computed_from(lane, embedder):
    lane.send(7, [AheadChunk(id=70, content_hash="old", text="The tax rule changed.")])
    assert lane.vectors(7, [(70, "new")], wait=never_stop) == {}
    found = lane.vectors(7, [(70, "old")], wait=never_stop)
    assert close_to(found[70], embedder.encode(["The tax rule changed."])[0])
    assert lane.vectors(8, [(70, "old")], wait=never_stop) == {}  # another document's


def test_a_document_is_sent_once_until_it_is_forgotten(lane):
    chunk = AheadChunk(id=1, content_hash="h", text="Once.")
    assert lane.send(1, [chunk]) is True
    assert lane.send(1, [chunk]) is False
    lane.forget([1])
    assert lane.send(1, [chunk]) is True


def test_jobs_the_lane_has_not_started_are_left_to_the_caller(lane):
    texts = [
        f"Sentence number {i} about the audit of payroll records." for i in range(4 * JOB_TEXTS)
    ]
    lane.send(1, [AheadChunk(id=i, content_hash=str(i), text=t) for i, t in enumerate(texts)])
    found = lane.vectors(1, [(i, str(i)) for i in range(len(texts))], wait=never_stop)
    # The first job was under way (or done) and is used; the ones behind it were cancelled
    # for the caller to compute, rather than waited for.
    assert set(found) <= set(range(JOB_TEXTS))
    assert lane.texts_done <= 2 * JOB_TEXTS


def test_forgetting_a_cancelled_sources_documents_cancels_their_waiting_jobs(lane):
    texts = [f"Line {i} of a long cancelled upload." for i in range(3 * JOB_TEXTS)]
    lane.send(1, [AheadChunk(id=i, content_hash=str(i), text=t) for i, t in enumerate(texts)])
    lane.forget([1])
    lane.close()  # waits for the job in flight
    assert lane.texts_done <= JOB_TEXTS


def test_after_a_shutdown_request_no_further_job_is_computed(lane):
    slices.request_shutdown()
    try:
        lane.send(1, [AheadChunk(id=1, content_hash="h", text="Stopping now.")])
        assert lane.vectors(1, [(1, "h")], wait=never_stop) == {}
    finally:
        slices.clear_shutdown()
    assert lane.texts_done == 0


def test_waiting_for_the_lane_stops_at_the_slices_checkpoint(lane):
    # One job of long texts: over a second of the model, against a wait step of half one.
    long = " ".join(f"clause {j} of the report's findings" for j in range(40))
    texts = [f"Paragraph {i}: {long}" for i in range(JOB_TEXTS)]
    lane.send(1, [AheadChunk(id=i, content_hash=str(i), text=t) for i, t in enumerate(texts)])
    while not lane_started(lane, 1):
        time.sleep(0.01)

    def stop() -> None:
        raise slices.SliceInterrupted(slices.BUDGET)

    with pytest.raises(slices.SliceInterrupted):
        lane.vectors(1, [(0, "0")], wait=stop)


def test_a_step_for_each_document_runs_before_the_next_is_brought_to_the_stage(
    make_source, settings
):
    settings.INGEST_PIPELINE_STAGES = [
        "ingest.stages.parse",
        "ingest.stages.chunk",
        "tests.ingest.sample_stages.recorded_each",
        "tests.ingest.sample_stages.unwanted_group_step",
    ]
    source = make_source({f"{t}.md": handbook(t, 1) for t in ("tax", "audit", "payroll")})
    do_start_source(source=source, enqueue=False)
    ids = sorted(Document.objects.filter(source=source).values_list("pk", flat=True))
    sample_stages.seen.clear()

    assert do_process_documents(document_ids=ids) == ["done"] * 3

    chunked, queued = DocumentStatus.CHUNKED, DocumentStatus.QUEUED
    steps = [(step, pk) for step, pk, _ in sample_stages.seen]
    assert steps == [
        ("each", ids[0]), ("each", ids[1]), ("each", ids[2]), ("group", 0),
        # The unwanted group step is skipped: each document goes through both stages alone.
        ("stage", ids[0]), ("unwanted", ids[0]),
        ("stage", ids[1]), ("unwanted", ids[1]),
        ("stage", ids[2]), ("unwanted", ids[2]),
    ]  # fmt: skip
    assert sample_stages.seen[0][2] == (chunked, queued, queued)
    assert sample_stages.seen[1][2] == (chunked, chunked, queued)


def test_a_document_processed_alone_never_copies_the_model(make_source, monkeypatch, settings):
    settings.INGEST_EMBED_AHEAD = True
    monkeypatch.setattr(embedding_lane, "_lane", None)  # as in a fresh worker process
    source = make_source({"tax.md": handbook("tax", 2)})
    do_start_source(source=source, enqueue=False)
    (document_id,) = Document.objects.filter(source=source).values_list("pk", flat=True)
    assert do_process_documents(document_ids=[document_id]) == ["done"]
    assert not Chunk.objects.filter(document_id=document_id, embedding=None).exists()
    assert embedding_lane._lane is None
