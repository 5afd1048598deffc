"""The crawl benchmark itself; run it through bench/crawl.py (see there)."""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
from bisect import bisect_right

from django.core.management import call_command

from ingest.actions.crawl import (
    do_create_crawl_source,
    do_run_crawl,
    do_start_crawl,
    validate_crawl_settings,
)
from ingest.actions.pipeline import do_process_documents
from ingest.models import CrawlPage
from tests.ingest.crawl_site import CrawlSite
from workspaces.actions.workspaces import do_create_workspace


def crawl_once(
    site: CrawlSite, *, pages: int, rate: float, process: bool, label: str
) -> dict[str, float]:
    workspace = do_create_workspace(slug=f"bench-crawl-{label}-{time.time_ns()}")
    config = validate_crawl_settings(
        url=site.url("/"), mode="recursive", max_pages=pages, max_depth=100, rate=rate
    )
    source = do_create_crawl_source(workspace=workspace, crawl=config)
    do_start_crawl(source=source, enqueue=False)
    site.clear_log()
    started = time.perf_counter()
    do_run_crawl(
        source_id=source.pk,
        process=(lambda ids: do_process_documents(document_ids=ids))
        if process
        else (lambda ids: None),
    )
    elapsed = time.perf_counter() - started
    ingested = CrawlPage.objects.filter(source=source, status="ingested").count()
    return {"pages": ingested, "seconds": elapsed, "pages_per_s": ingested / elapsed}


def peak_rate(times: list[float]) -> tuple[int, float]:
    """(most requests started in any 1 s window, smallest gap between two starts)."""
    times = sorted(times)
    most = max(bisect_right(times, t + 1.0 - 1e-9) - i for i, t in enumerate(times))
    gap = min((b - a for a, b in itertools.pairwise(times)), default=float("inf"))
    return most, gap


def _median(runs: list[dict[str, float]]) -> float | None:
    return round(statistics.median(r["pages_per_s"] for r in runs), 2) if runs else None


def main() -> None:
    parser = argparse.ArgumentParser(description="Crawl benchmark; see bench/crawl.py.")
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3, help="fetch-only runs")
    parser.add_argument("--ingest-runs", type=int, default=1, help="end-to-end runs (slow)")
    parser.add_argument("--rate", type=float, default=5.0)
    parser.add_argument("--rated-pages", type=int, default=100)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)

    # No Crawl-delay in robots.txt: the "rate limit off" figures measure the crawler, not it.
    with CrawlSite(n_pages=args.pages, crawl_delay=None) as site:
        fetched = [
            crawl_once(site, pages=args.pages, rate=0, process=False, label=f"f{i}")
            for i in range(args.runs)
        ]
        for i, run in enumerate(fetched):
            print(
                json.dumps({"fetch_only_run": i, **{k: round(v, 2) for k, v in run.items()}}),
                flush=True,
            )
        ingested = [
            crawl_once(site, pages=args.pages, rate=0, process=True, label=f"i{i}")
            for i in range(args.ingest_runs)
        ]
        for i, run in enumerate(ingested):
            print(
                json.dumps({"ingest_run": i, **{k: round(v, 2) for k, v in run.items()}}),
                flush=True,
            )
        crawl_once(site, pages=args.rated_pages, rate=args.rate, process=False, label="rated")
        most, gap = peak_rate([record.time for record in site.log])
        summary = {
            "site_pages": args.pages,
            "fetch_only_pages_per_s_median": _median(fetched),
            "ingest_pages_per_s_median": _median(ingested),
            "rate_limit": args.rate,
            "rated_requests": len(site.log),
            "peak_requests_in_any_1s_window": most,
            "min_gap_between_requests_s": round(gap, 4),
            "peak_within_limit": most <= args.rate and gap >= 1 / args.rate - 0.01,
        }
        print("summary:", json.dumps(summary), flush=True)
