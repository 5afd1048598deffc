"""The re-crawl benchmark itself; run it through bench/recrawl.py (see there)."""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import threading
import time
from email.utils import formatdate, parsedate_to_datetime
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

from django.core.management import call_command
from django.db.models import Sum

from bench.cleanup import drop_workspace
from bench.doc_quality_run import _QuietHandler, drain
from bench.panel_corpora import CORPORA, Corpus, corpus
from ingest.actions.crawl import (
    do_create_crawl_source,
    do_run_crawl,
    do_start_crawl,
    validate_crawl_settings,
)
from ingest.actions.pipeline import do_process_documents
from ingest.embeddings import get_embedder
from ingest.models import CrawlPage, Document, Source
from knowledge.extraction.offline import get_offline_extractor
from knowledge.models import ExtractionRun, SourceExtraction
from workspaces.actions.workspaces import do_create_workspace
from workspaces.models import Workspace

SLUG = "bench-recrawl"
ADDED = b"<p>Added for the re-crawl benchmark: one more sentence on this page.</p>\n"


class _Handler(_QuietHandler):
    """http.server's files, but a path in `overrides` answers with other bytes and a later
    Last-Modified (304 to an If-Modified-Since not older than it), as an edited page would."""

    overrides: ClassVar[dict[str, tuple[bytes, float]]] = {}

    def send_head(self) -> Any:
        path = self.path.split("?", 1)[0]
        if path not in self.overrides:
            return super().send_head()
        body, modified = self.overrides[path]
        since = self.headers.get("If-Modified-Since")
        if since:
            try:
                if parsedate_to_datetime(since).timestamp() >= int(modified):
                    self.send_response(304)
                    self.end_headers()
                    return None
            except (TypeError, ValueError):
                pass
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Last-Modified", formatdate(modified, usegmt=True))
        self.end_headers()
        self.wfile.write(body)
        return None


def serve(root: Path) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def work(source: Source) -> dict[str, int]:
    """What the pipeline has done for the source so far (cumulative counts)."""
    extraction = SourceExtraction.objects.filter(source=source).aggregate(
        extracted=Sum("windows_extracted"), cached=Sum("windows_cached")
    )
    return {
        "texts_embedded": get_embedder().texts_encoded,
        "extraction_windows_run": int(extraction["extracted"] or 0),
        "extraction_windows_cached": int(extraction["cached"] or 0),
        "extraction_runs": ExtractionRun.objects.filter(workspace=source.workspace).count(),
    }


def one_round(source: Source, *, first: bool = False) -> dict[str, Any]:
    """A crawl round as a worker runs it (fetch, then each group of pages through the
    pipeline, then what went round again), timed; and the work it did."""
    processed: list[int] = []

    def process(ids: list[int]) -> None:
        processed.extend(ids)
        do_process_documents(document_ids=ids)

    before = work(source)
    started = time.perf_counter()
    if not first:
        do_start_crawl(source=source, enqueue=False)
    do_run_crawl(source_id=source.pk, process=process)
    drain(source)
    seconds = time.perf_counter() - started
    after = work(source)
    source.refresh_from_db()
    return {
        "seconds": round(seconds, 2),
        "status": source.status,
        "documents_processed": len(set(processed)),
        **{key: after[key] - before[key] for key in after},
        "pages": {k: source.last_run.get(k, 0) for k in ("added", "changed", "unchanged")},
        "processed_ids": sorted(set(processed)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Re-crawl benchmark; see bench/recrawl.py.")
    html = [c.name for c in CORPORA if c.kind == "crawl"]
    parser.add_argument("--corpus", default="octave", choices=html)
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    chosen: Corpus = corpus(args.corpus)
    if not chosen.root.exists():
        raise SystemExit(f"{chosen.root} is missing (apt-get install {chosen.package})")
    call_command("migrate", verbosity=0)
    get_embedder()
    get_offline_extractor()
    old = Workspace.objects.filter(slug=SLUG).first()
    if old is not None:
        drop_workspace(old)
    workspace = do_create_workspace(slug=SLUG, name="Re-crawl benchmark")
    server = serve(chosen.root)
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        config = validate_crawl_settings(
            url=f"{base}/{chosen.start}", mode="recursive", max_pages=args.pages,
            max_depth=100, rate=0, allow=chosen.allow,
        )  # fmt: skip
        source = do_create_crawl_source(workspace=workspace, crawl=config, name=chosen.name)
        do_start_crawl(source=source, enqueue=False)
        first = one_round(source, first=True)
        first.pop("processed_ids")
        print(json.dumps({"first_crawl": first}), flush=True)

        unchanged = []
        for i in range(args.runs):
            result = one_round(source)
            result.pop("processed_ids")
            unchanged.append(result)
            print(json.dumps({"unchanged_recrawl": i, **result}), flush=True)

        # One page changes: the middle one of the documents, by path.
        paths = sorted(Document.objects.filter(source=source).values_list("path", flat=True))
        changed_url = paths[len(paths) // 2]
        local = changed_url.removeprefix(base)
        original = (chosen.root / local.lstrip("/")).read_bytes()
        body = original.replace(b"</body>", ADDED + b"</body>", 1)
        _Handler.overrides[local] = (body if body != original else original + ADDED, time.time())
        changed = one_round(source)
        document = Document.objects.get(source=source, path=changed_url)
        changed["only_that_page"] = changed.pop("processed_ids") == [document.pk]
        print(json.dumps({"one_page_changed": changed}), flush=True)
    finally:
        server.shutdown()

    median = statistics.median(r["seconds"] for r in unchanged)
    summary = {
        "corpus": chosen.name,
        "pages": CrawlPage.objects.filter(source=source, status="ingested").count(),
        "documents": Document.objects.filter(source=source).count(),
        "first_crawl_s": first["seconds"],
        "recrawl_unchanged_median_s": median,
        "recrawl_share_of_first": round(median / first["seconds"], 4),
        "goal_5_percent": median <= 0.05 * first["seconds"],
        "unchanged_embedded": sum(r["texts_embedded"] for r in unchanged),
        "unchanged_extraction_windows": sum(
            r["extraction_windows_run"] + r["extraction_windows_cached"] for r in unchanged
        ),
        "unchanged_documents_processed": sum(r["documents_processed"] for r in unchanged),
        "one_changed_s": changed["seconds"],
        "one_changed_documents_processed": changed["documents_processed"],
        "one_changed_only_that_page": changed["only_that_page"],
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
    }
    print("summary:", json.dumps(summary), flush=True)
