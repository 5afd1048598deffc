"""The extraction benchmark itself; run it through bench/extract.py (see there)."""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

from django.conf import settings
from django.core.management import call_command

from bench.extract_world import ORGS, PEOPLE, PLACES
from ingest.actions.sources import do_add_file, do_create_source, do_start_source
from ingest.models import Document, Source
from knowledge.actions.extraction.documents import do_extract_documents
from knowledge.actions.extraction.runs import document_windows, ensure_runs
from knowledge.extraction.extractors import get_extractor, reset_extractor
from knowledge.models import Entity, ExtractionRun
from knowledge.selectors.schema import get_schema_snapshot
from tests.support import run_pending
from workspaces.actions.workspaces import do_create_workspace


def document_text(seed: int, paragraphs: int) -> str:
    rng = random.Random(seed)
    parts = []
    for n in range(paragraphs):
        sentences = []
        for _ in range(9):
            person, place, org = rng.choice(PEOPLE), rng.choice(PLACES), rng.choice(ORGS)
            sentences.append(
                rng.choice(
                    [
                        f"{person} joined {org} in {place} after years of research on compilers.",
                        f"In {place}, {person} presented results that {org} later adopted.",
                        f"{org} funded a laboratory in {place} where {person} studied networks.",
                        f"Colleagues at {org} remember {person} for careful proofs and talks.",
                    ]
                )
            )
        parts.append(f"## Section {seed}.{n}\n\n" + " ".join(sentences))
    return "\n\n".join(parts)


def build_corpus(windows: int) -> tuple[Source, list[Document]]:
    """A source whose documents hold about `windows` extraction windows (no extraction yet)."""
    workspace = do_create_workspace(slug=f"bench-extract-{time.time_ns()}")
    source = do_create_source(workspace=workspace, kind="upload", name="bench")
    n = 0
    while True:
        do_add_file(source=source, path=f"doc-{n:04}.md", chunks=[document_text(n, 30).encode()])
        n += 1
        if n % 4 == 0:
            do_start_source(source=source, enqueue=False)
            run_pending(source)
            documents = list(Document.objects.filter(source=source))
            if sum(len(document_windows(d)) for d in documents) >= windows:
                return source, documents


def timed_requests(documents: list[Document]) -> dict[str, float]:
    """The LLM stage alone, cold: every window's request, parse and stored run (with its
    calls and token accounting), without writing evidence."""
    workspace_id = documents[0].workspace_id
    ExtractionRun.objects.filter(workspace_id=workspace_id).delete()
    Entity.objects.filter(workspace_id=workspace_id).delete()
    source = Source.objects.get(pk=documents[0].source_id)
    windows = [w for d in documents for w in document_windows(d)]
    schema = get_schema_snapshot(source.workspace)
    started = time.perf_counter()
    ensured = ensure_runs(source=source, windows=windows, extractor=get_extractor(), schema=schema)
    elapsed = time.perf_counter() - started
    assert not ensured.error, ensured.error
    return {"windows": ensured.extracted, "seconds": elapsed,
            "windows_per_s": ensured.extracted / elapsed}  # fmt: skip


def timed(documents: list[Document]) -> dict[str, float]:
    """One cold extraction: the workspace's cache and graph are emptied first (untimed), so
    every window is sent and every entity, mention and relation is written anew."""
    workspace_id = documents[0].workspace_id
    ExtractionRun.objects.filter(workspace_id=workspace_id).delete()
    Entity.objects.filter(workspace_id=workspace_id).delete()
    started = time.perf_counter()
    report = do_extract_documents(documents=documents)
    elapsed = time.perf_counter() - started
    assert not report.error, report.error
    unique = report.extracted
    return {"windows": unique, "seconds": elapsed, "windows_per_s": unique / elapsed}


def main() -> None:
    parser = argparse.ArgumentParser(description="Extraction benchmark; see bench/extract.py.")
    parser.add_argument("--windows", type=int, default=160)
    parser.add_argument("--offline-windows", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    args = parser.parse_args()
    call_command("migrate", verbosity=0)

    # Build the corpus without extraction; each measured run extracts it (forced).
    settings.INGEST_PIPELINE_STAGES = [
        s for s in settings.INGEST_PIPELINE_STAGES if not s.startswith("knowledge.")
    ]
    _source, documents = build_corpus(args.windows)
    windows = [w for d in documents for w in document_windows(d)]
    tokens = statistics.median(w.tokens for w in windows)
    print(
        json.dumps(
            {"documents": len(documents), "windows": len(windows), "median_window_tokens": tokens}
        ),
        flush=True,
    )
    summary: dict[str, object] = {"latency_s": args.latency}
    # The server runs in its own process, as a real model server would: sharing this
    # process's GIL would charge its work to the extractor.
    server = subprocess.Popen(
        [sys.executable, "tests/llm_server.py", "--delay", str(args.latency),
         "--responder", "bench.extract_world:WORLD"],
        stdout=subprocess.PIPE, text=True, cwd=settings.BASE_DIR,
        env={**os.environ, "PYTHONPATH": str(settings.BASE_DIR)},
    )  # fmt: skip
    try:
        assert server.stdout is not None
        settings.LLM_BASE_URL = server.stdout.readline().strip()
        settings.LLM_MODEL = "scripted-model"
        settings.EXTRACTION_GLEANING_PASSES = 0
        for concurrency in args.concurrency:
            settings.LLM_CONCURRENCY = concurrency
            reset_extractor()
            ideal = concurrency / args.latency
            for label, measure in (("requests", timed_requests), ("end_to_end", timed)):
                runs = []
                for i in range(args.runs):
                    run = measure(documents)
                    runs.append(run)
                    print(
                        json.dumps(
                            {"concurrency": concurrency, "measure": label, "run": i}
                            | {k: round(v, 3) for k, v in run.items()}
                        ),
                        flush=True,
                    )
                median = statistics.median(r["windows_per_s"] for r in runs)
                summary[f"c{concurrency}_{label}"] = {
                    "windows_per_s": round(median, 2),
                    "ideal": ideal,
                    "ratio": round(median / ideal, 3),
                    "runs": [round(r["windows_per_s"], 2) for r in runs],
                }
    finally:
        server.terminate()
        server.wait(timeout=10)
    settings.LLM_BASE_URL = settings.LLM_MODEL = ""
    reset_extractor()
    extractor = get_extractor()
    assert extractor.kind == "offline"
    offline_docs = []
    for document in documents:
        offline_docs.append(document)
        if sum(len(document_windows(d)) for d in offline_docs) >= args.offline_windows:
            break
    runs = []
    for i in range(args.runs):
        run = timed(offline_docs)
        runs.append(run)
        print(
            json.dumps({"offline": True, "run": i} | {k: round(v, 3) for k, v in run.items()}),
            flush=True,
        )
    summary["offline"] = {
        "windows_per_s": round(statistics.median(r["windows_per_s"] for r in runs), 2),
        "runs": [round(r["windows_per_s"], 2) for r in runs],
        "model": extractor.model_id,
    }
    print(json.dumps({"summary": summary}), flush=True)
