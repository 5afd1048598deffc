"""A worker killed in the middle of extraction: a new worker finishes the source with no
duplicate runs or evidence, and re-sends at most the windows that were in flight."""

from __future__ import annotations

import signal

import pytest
from django_tasks_db.models import DBTaskResult

from ingest.actions.sources import do_add_file, do_create_source, do_start_source
from ingest.models import Source
from knowledge.actions.extraction.runs import document_windows
from knowledge.extraction.extractors import reset_extractor
from knowledge.models import ExtractionRun, Mention, RelationEvidence
from tests.knowledge.conftest import World
from tests.llm_server import ScriptedLLM
from tests.support import run_pending, start_worker, wait_for
from workspaces.actions.workspaces import do_create_workspace

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

PEOPLE = ["Ada Lovelace", "Charles Babbage", "Mary Somerville", "Alan Turing", "Grace Hopper"]
WORLD = World(
    entities=dict.fromkeys(PEOPLE, "person") | {"Analytical Engine": "product"},
    relations=[(name, "Analytical Engine", "uses") for name in PEOPLE],
)


# Each letter says something of its own: text that repeats across three documents of a
# source (numbers aside) is boilerplate and never extracted (ingest/boilerplate.py).
SUBJECTS = [
    "the mill", "the store", "punched cards", "the barrel printer", "loops", "the carry",
    "Bernoulli numbers", "the funding", "the drawings", "the lecture in Turin", "tables",
    "the difference engine", "the notation", "the translation",
]  # fmt: skip


def corpus() -> dict[str, bytes]:
    files = {}
    for n, subject in enumerate(SUBJECTS):
        a, b = PEOPLE[n % 5], PEOPLE[(n + 2) % 5]
        files[f"letter-{n:02}.md"] = (
            f"# Letter {n}\n\n{a} wrote to {b} about {subject} of the Analytical Engine. "
            f"{b} answered that {subject} needed more work (note {n})."
        ).encode()
    return files


def evidence(source: Source) -> list[tuple[str, str, int | None]]:
    return sorted(
        Mention.objects.filter(chunk__document__source=source).values_list(
            "chunk__document__path", "entity__name", "char_start"
        )
    )


@pytest.mark.slow(reason="a worker killed mid-extraction")
def test_killed_worker_mid_extraction_resumes_without_duplicate_runs_or_evidence(
    tmp_path, settings
):
    settings.MEDIA_ROOT = media_root = tmp_path / "media"
    files = corpus()
    with ScriptedLLM(default_delay=0.4) as llm:
        llm.responder = WORLD
        settings.LLM_BASE_URL, settings.LLM_MODEL = llm.base_url, "scripted-model"
        settings.EXTRACTION_GLEANING_PASSES = 0
        reset_extractor()
        reference_ws = do_create_workspace(slug="reference")
        reference = do_create_source(workspace=reference_ws, kind="upload", name="reference")
        for path, data in files.items():
            do_add_file(source=reference, path=path, chunks=[data])
        do_start_source(source=reference, enqueue=False)
        run_pending(reference)
        reset_extractor()

        workspace = do_create_workspace(slug="resume")
        source = do_create_source(workspace=workspace, kind="upload", name="interrupted")
        for path, data in files.items():
            do_add_file(source=source, path=path, chunks=[data])
        llm.clear_requests()
        do_start_source(source=source)

        env = {
            "GRAPHLOOM_MEDIA_ROOT": str(media_root),
            "LLM_BASE_URL": llm.base_url,
            "LLM_MODEL": "scripted-model",
            "LLM_CONCURRENCY": "2",
            "EXTRACTION_GLEANING_PASSES": "0",
        }
        first = start_worker("first", **env)
        try:
            wait_for(
                lambda: ExtractionRun.objects.filter(workspace=workspace).count() >= 3,
                timeout=180,
                what="the first worker to extract some windows",
            )
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait()
        runs_when_killed = ExtractionRun.objects.filter(workspace=workspace).count()
        windows = len(files)
        assert runs_when_killed < windows, "the worker finished before it could be interrupted"

        second = start_worker("second", **env)
        try:
            wait_for(
                lambda: Source.objects.get(pk=source.pk).status == "done",
                timeout=300,
                what="the second worker to finish the source",
            )
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(timeout=60)

        hashes = {w.hash for d in source.documents.all() for w in document_windows(d)}
        runs = ExtractionRun.objects.filter(workspace=workspace)
        assert runs.count() == len(hashes) == windows
        assert set(runs.values_list("window_hash", flat=True)) == hashes
        assert evidence(source) == evidence(reference)
        assert RelationEvidence.objects.filter(chunk__document__source=source).count() == (
            RelationEvidence.objects.filter(chunk__document__source=reference).count()
        )
        # Only windows in flight when the worker died could have been sent twice.
        assert windows <= len(llm.chat_requests) <= windows + 2
        assert not DBTaskResult.objects.filter(status="RUNNING").exists()
