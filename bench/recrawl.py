"""Re-crawl benchmark (issue 41): what a scheduled re-crawl of an unchanged site costs.

    .venv/bin/python bench/recrawl.py [--corpus octave] [--pages 500] [--runs 3]

A panel corpus (bench/panel_corpora.py; an HTML one, from the Debian package under
/usr/share/doc) is served by Python's http.server (which answers If-Modified-Since with
304, as most static servers do) and crawled recursively, up to `--pages` pages, by one
process doing a worker's work, with the models loaded first: parse, chunk, embed and the
offline extractor.

1. The first crawl: wall time and work done (documents processed, texts embedded,
   extraction windows run and answered from the cache).
2. `--runs` re-crawls of the unchanged site: the same figures for each, and their median
   time against the first crawl's. Goal: at most 5 % of the first crawl's time, nothing
   embedded, no extraction window.
3. One page among them changed (a paragraph added, a later Last-Modified): a re-crawl
   processes that page only.
Uses its own database (`graphloom_bench`) on the embedded server.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run(
        "bench.recrawl_run",
        env={"GRAPHLOOM_CRAWL_ALLOWED_NETWORKS": "127.0.0.0/8"},
        media_prefix="graphloom-bench-media-",
        drop_env_prefixes=("LLM_", "EXTRACTION_"),
    )
