"""Failures stay local: an extraction window that fails after its retries fails only the
document it belongs to (with the error on that document), every other document of the same
task group is extracted and written, and a retry sends only the failed window again (the
others are cached runs). Through the real pipeline, against the real scripted LLM server,
which answers errors for one window's text only.
"""

from __future__ import annotations

from typing import Any

import pytest

from ingest.actions.sources import do_add_file, do_create_source, do_retry_source, do_start_source
from ingest.models import Document, DocumentStatus, Source, SourceStatus
from knowledge.extraction.extractors import reset_extractor
from knowledge.models import (
    Entity,
    ExtractionRun,
    ExtractionStatus,
    LlmCall,
    Mention,
    SourceExtraction,
)
from knowledge.selectors.extraction import extraction_status
from tests.knowledge.conftest import World, window_text
from tests.llm_server import Reply
from tests.support import run_pending

pytestmark = pytest.mark.django_db

WORLD = World(
    entities={
        "Ada Lovelace": "person",
        "Charles Babbage": "person",
        "Grace Hopper": "person",
        "Station 1": "location",
        "Station 4": "location",
    },
    relations=[("Ada Lovelace", "Charles Babbage", "related_to")],
)
FAILING = "Station 4 of the survey"  # in exactly one window of the survey


def survey(paragraphs: int) -> str:
    """Distinct paragraphs, enough for several extraction windows."""
    return "\n\n".join(
        f"Paragraph {i}: Station {i} of the survey lies near Ridge {i}. "
        + " ".join(f"Observation {i}.{j} recorded stable readings at the site." for j in range(12))
        for i in range(paragraphs)
    )


FILES = {
    "letters.md": b"Ada Lovelace worked with Charles Babbage on the Analytical Engine.",
    "survey.md": survey(8).encode(),
    "navy.md": b"Grace Hopper wrote the first compiler for the Navy.",
}


class FailingWindow:
    """The world's replies, except a server error for any window containing `failing`."""

    def __init__(self, failing: str | None = None, *, status: int = 500) -> None:
        self.failing, self.status = failing, status

    def __call__(self, body: dict[str, Any]) -> Reply:
        if self.failing is not None and self.failing in window_text(body):
            return Reply(status=self.status, content="the model crashed on this window")
        return WORLD(body)


@pytest.fixture
def llm_settings(llm, settings):
    settings.EXTRACTION_GLEANING_PASSES = 0
    settings.EXTRACTION_WINDOW_TOKENS = 300
    settings.LLM_MAX_RETRIES = 1
    settings.LLM_CONCURRENCY = 4
    reset_extractor()
    return llm


def ingest_group(workspace, files: dict[str, bytes]) -> Source:
    """An upload source whose documents go through the pipeline as one task's group."""
    source = do_create_source(workspace=workspace, kind="upload", name="group")
    for path, data in files.items():
        do_add_file(source=source, path=path, chunks=[data])
    do_start_source(source=source, enqueue=False)
    assert len(files) <= 16  # INGEST_DOCUMENTS_PER_TASK: one group
    run_pending(source)
    source.refresh_from_db()
    return source


def requests_for(llm, text: str) -> int:
    return sum(text in window_text(r.body) for r in llm.chat_requests)


def test_one_failing_window_fails_its_document_only_and_a_retry_resends_only_it(
    llm_settings, alice
):
    llm = llm_settings
    llm.responder = FailingWindow(FAILING)

    source = ingest_group(alice.workspace, FILES)

    documents = {d.path: d for d in Document.objects.filter(source=source)}
    survey_doc = documents["survey.md"]
    assert survey_doc.status == DocumentStatus.FAILED
    assert survey_doc.error.startswith("Extraction failed: LLM request failed after 2 attempts")
    assert "500" in survey_doc.error
    assert documents["letters.md"].status == DocumentStatus.DONE
    assert documents["letters.md"].error == ""
    assert documents["navy.md"].status == DocumentStatus.DONE
    # The other documents of the group are in the graph ...
    names = set(Entity.objects.for_workspace(alice.workspace).values_list("name", flat=True))
    assert {"Ada Lovelace", "Charles Babbage", "Grace Hopper"} <= names
    # ... the failed one is not (half a document is not written), though its other
    # windows were extracted and cached.
    assert not Mention.objects.filter(chunk__document=survey_doc).exists()
    assert "Station 1" not in names
    windows = len({window_text(r.body) for r in llm.chat_requests})
    assert windows >= 5  # letters, navy and at least three survey windows
    assert ExtractionRun.objects.count() == windows - 1
    # The failing window was tried LLM_MAX_RETRIES + 1 times, every other one once.
    assert requests_for(llm, FAILING) == 2
    assert len(llm.chat_requests) == windows + 1
    assert LlmCall.objects.filter(source=source, ok=False).count() == 1
    assert source.status == SourceStatus.DONE  # not every document failed
    account = SourceExtraction.objects.get(source=source)
    assert account.status == ExtractionStatus.FAILED
    assert "500" in account.message
    assert source.counters["failed"] == 1
    assert source.counters["done"] == 2
    assert source.can_retry

    # The model recovers; a retry sends the failed window and nothing else.
    llm.responder = FailingWindow(None)
    llm.clear_requests()
    assert do_retry_source(source=source, enqueue=False) == 1
    run_pending(source)

    assert len(llm.chat_requests) == 1
    assert FAILING in window_text(llm.chat_requests[0].body)
    survey_doc.refresh_from_db()
    assert survey_doc.status == DocumentStatus.DONE
    assert survey_doc.error == ""
    assert Entity.objects.get(name="Station 1").mention_count == 1
    assert Entity.objects.get(name="Station 4").mention_count == 1
    assert Entity.objects.get(name="Ada Lovelace").mention_count == 1
    assert ExtractionRun.objects.count() == windows
    source.refresh_from_db()
    assert source.counters["failed"] == 0
    assert source.counters["done"] == 3
    account.refresh_from_db()
    assert extraction_status(account, source) == ExtractionStatus.DONE
    assert account.message == ""


def test_a_failure_no_window_can_escape_stops_sending_and_fails_every_document(
    llm_settings, alice, settings
):
    llm = llm_settings
    settings.LLM_CONCURRENCY = 1
    reset_extractor()
    llm.responder = lambda body: Reply(status=401, content="invalid api key")

    source = ingest_group(alice.workspace, FILES)

    # A refused key fails every window alike: one request, not one per window.
    assert len(llm.chat_requests) == 1
    statuses = set(Document.objects.filter(source=source).values_list("status", flat=True))
    assert statuses == {DocumentStatus.FAILED}
    errors = list(Document.objects.filter(source=source).values_list("error", flat=True))
    assert all("refused the API key (401)" in error for error in errors)
    assert sum(error.startswith("Extraction failed: Not sent") for error in errors) == 2
    assert source.status == SourceStatus.FAILED


def test_windows_failing_in_a_row_stop_the_rest(llm_settings, alice, settings):
    llm = llm_settings
    settings.LLM_CONCURRENCY = 1
    settings.LLM_MAX_RETRIES = 0
    reset_extractor()
    llm.responder = lambda body: Reply(status=500, content="the model is down")
    files = {f"note-{n}.md": f"Grace Hopper wrote note {n}.".encode() for n in range(6)}

    source = ingest_group(alice.workspace, files)

    # Three failures in a row with nothing succeeding: the model is taken to be down.
    assert len(llm.chat_requests) == 3
    errors = list(Document.objects.filter(source=source).values_list("error", flat=True))
    assert len(errors) == 6
    stopped = "Not sent, extraction stopped after 3 failed windows in a row"
    assert sum(stopped in error for error in errors) == 3
    assert set(Document.objects.filter(source=source).values_list("status", flat=True)) == {
        DocumentStatus.FAILED
    }
