"""The relevance filter's threshold benchmark itself; run it through bench/topic_filter.py."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command

from bench.cleanup import drop_workspace
from bench.doc_quality_run import drain, serve
from ingest.actions.crawl import (
    do_create_crawl_source,
    do_run_crawl,
    do_start_crawl,
    validate_crawl_settings,
)
from ingest.actions.pipeline import do_process_documents
from ingest.models import Chunk, Document, DocumentStatus, Source
from knowledge.actions.extraction import relevance
from knowledge.extraction.relevance import topic_similarity
from knowledge.retrieval.query_embedding import embed_query
from workspaces.actions.workspaces import do_create_workspace


@dataclass(frozen=True)
class Manual:
    name: str
    package: str
    root: Path
    start: str
    topics: tuple[str, ...]  # words, then a sentence, saying what the manual is about


MANUALS = (
    Manual(
        name="handbook",
        package="debian-handbook",
        root=Path("/usr/share/doc/debian-handbook/html/en-US"),
        start="index.html",
        topics=(
            "Debian system administration",
            "Administering a Debian server: installing packages with APT, configuring "
            "network services, users, security and backups.",
        ),
    ),
    Manual(
        name="octave",
        package="octave-doc",
        root=Path("/usr/share/doc/octave/octave.html"),
        start="index.html",
        topics=(
            "GNU Octave numerical computing",
            "Programming numerical computations in GNU Octave: matrices, linear algebra, "
            "functions, plotting and data analysis.",
        ),
    ),
)

THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 11)]


def crawl(workspace: Any, manual: Manual, pages: int) -> Source:
    """The manual crawled from a local http.server, parsed, chunked and embedded."""
    if not (manual.root / manual.start).exists():
        raise SystemExit(f"{manual.root} is missing: apt-get install {manual.package}")
    server = serve(manual.root)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{manual.start}"
        config = validate_crawl_settings(
            url=url, mode="recursive", max_pages=pages, max_depth=100, rate=0
        )
        source = do_create_crawl_source(workspace=workspace, crawl=config, name=manual.name)
        do_start_crawl(source=source, enqueue=False)
        do_run_crawl(
            source_id=source.pk, process=lambda ids: do_process_documents(document_ids=ids)
        )
    finally:
        server.shutdown()
    drain(source)
    return source


def spread(values: list[float]) -> dict[str, float | int]:
    ordered = sorted(values)

    def at(share: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 3)

    return {
        "n": len(ordered),
        "min": round(ordered[0], 3),
        "p05": at(0.05),
        "p25": at(0.25),
        "median": round(statistics.median(ordered), 3),
        "p75": at(0.75),
        "p95": at(0.95),
        "max": round(ordered[-1], 3),
    }


def sweep(on: list[float], off: list[float]) -> list[dict[str, float]]:
    """For each threshold: the share of on-topic pages kept, of off-topic ones left out."""
    return [
        {
            "threshold": t,
            "on_topic_kept": round(sum(v >= t for v in on) / len(on), 3),
            "off_topic_left_out": round(sum(v < t for v in off) / len(off), 3),
        }
        for t in THRESHOLDS
    ]


def similarities_all_chunks(documents: list[Document], topic: str) -> dict[int, float]:
    """The alternative direction: every content chunk's mean, not the first few."""
    vector = embed_query(topic, [])
    assert vector is not None
    found: dict[int, float] = {}
    for document in documents:
        rows = [
            list(v)
            for v in Chunk.objects.filter(
                document=document, boilerplate=False, embedding__isnull=False
            )
            .order_by("ordinal")
            .values_list("embedding", flat=True)
            if v is not None
        ]
        similarity = topic_similarity(rows, vector.values, first=max(1, len(rows)))
        if similarity is not None:
            found[document.pk] = similarity
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description="Relevance filter threshold; see the script.")
    parser.add_argument("--pages", type=int, default=120, help="pages crawled per manual")
    parser.add_argument("--threshold", type=float, default=settings.CRAWL_TOPIC_MIN_SIMILARITY)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    # The filter decides before extraction: the pages are parsed, chunked and embedded only.
    settings.INGEST_PIPELINE_STAGES = [
        s for s in settings.INGEST_PIPELINE_STAGES if s.startswith("ingest.")
    ]
    workspace = do_create_workspace(slug=f"bench-topic-{time.time_ns()}")
    try:
        started = time.perf_counter()
        documents: dict[str, list[Document]] = {}
        for manual in MANUALS:
            source = crawl(workspace, manual, args.pages)
            documents[manual.name] = list(
                Document.objects.filter(source=source, status=DocumentStatus.DONE).order_by("pk")
            )
        print(
            json.dumps(
                {
                    "crawled": {name: len(docs) for name, docs in documents.items()},
                    "seconds": round(time.perf_counter() - started, 1),
                }
            ),
            flush=True,
        )
        rows = []
        for manual in MANUALS:
            for topic in manual.topics:
                rows.append(report(manual, topic, documents, args.threshold))
        worst_kept = min(r["first_chunks"]["at_threshold"]["on_topic_kept"] for r in rows)
        worst_left = min(r["first_chunks"]["at_threshold"]["off_topic_left_out"] for r in rows)
        summary = {
            "threshold": args.threshold,
            "pages_per_manual": args.pages,
            "worst_on_topic_kept": worst_kept,
            "worst_off_topic_left_out": worst_left,
        }
        print("summary:", json.dumps(summary), flush=True)
    finally:
        drop_workspace(workspace)


def report(
    manual: Manual, topic: str, documents: dict[str, list[Document]], threshold: float
) -> dict[str, Any]:
    probe = Source(workspace_id=0, settings={"topic": topic})
    first: dict[str, list[float]] = {}
    every: dict[str, list[float]] = {}
    for name, docs in documents.items():
        judged = relevance.judge_documents(probe, docs)
        first[name] = [v.similarity for v in judged.values() if v.similarity is not None]
        every[name] = list(similarities_all_chunks(docs, topic).values())
    others = [name for name in documents if name != manual.name]
    row: dict[str, Any] = {"manual": manual.name, "topic": topic}
    for label, values in (("first_chunks", first), ("all_chunks", every)):
        on = values[manual.name]
        off = [v for name in others for v in values[name]]
        row[label] = {
            "on_topic": spread(on),
            "off_topic": spread(off),
            "sweep": sweep(on, off),
            "at_threshold": {
                "on_topic_kept": round(sum(v >= threshold for v in on) / len(on), 3),
                "off_topic_left_out": round(sum(v < threshold for v in off) / len(off), 3),
            },
        }
    print(json.dumps(row), flush=True)
    return row
