"""Crawl benchmark (issue 4), against a generated local site.

    .venv/bin/python bench/crawl.py [--pages 1000] [--runs 3] [--rate 5] [--rated-pages 100]

1. With the rate limit off: pages/s fetched (crawl loop only: fetch, robots, frontier,
   storing the page as a document) and pages/s ingested end to end (the same crawl with its
   documents parsed, chunked and embedded as they come), on a site of `--pages` pages.
2. With the rate limit on (`--rate` requests/s): the peak request rate the site saw, in any
   sliding one-second window and as the smallest gap between two request starts, on a
   `--rated-pages` crawl. The peak must not exceed the setting.
Uses its own database (`graphloom_bench`) on the embedded server.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    # Set-up only when run as a script: the parser's child process ("spawn") imports this
    # file again and must stay light.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run(
        "bench.crawl_run",
        env={
            "GRAPHLOOM_CRAWL_ALLOWED_NETWORKS": "127.0.0.0/8",
        },
        media_prefix="graphloom-bench-media-",
    )
