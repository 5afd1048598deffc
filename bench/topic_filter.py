"""The relevance filter's threshold (issue 41), measured on two real manuals.

    .venv/bin/python bench/topic_filter.py [--pages 120] [--threshold 0.2] [--chunks 8]

Two Debian documentation packages of different subjects (`apt-get install debian-handbook
octave-doc`: the Debian Administrator's Handbook, system administration; the GNU Octave
manual, numerical computing) are each served by Python's http.server and crawled as a
user would (recursive, `--pages` pages each), then parsed, chunked and embedded through the
real pipeline (no extraction: the filter decides before it). Each document is then judged
against topics describing one manual or the other, in words and in a sentence, by the very
function the extract stage calls (knowledge/actions/extraction/relevance.py,
`judge_documents`). Printed: for each topic, the similarity distributions of the manual it
describes (on topic) and of the other one (off topic), and for thresholds from 0.05 to
0.50 the share of on-topic pages kept and of off-topic pages left out; then the same for
every chunk's mean instead of the first `--chunks` (the document direction chosen in
knowledge/extraction/relevance.py); last a summary line with the setting's threshold.
Uses its own database (`graphloom_bench_topic`) on the embedded server.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run(
        "bench.topic_filter_run",
        env={
            "GRAPHLOOM_DB_NAME": "graphloom_bench_topic",
            "GRAPHLOOM_CRAWL_ALLOWED_NETWORKS": "127.0.0.0/8",
        },
        media_prefix="graphloom-bench-topic-media-",
        drop_env_prefixes=("LLM_", "EXTRACTION_", "CRAWL_TOPIC_"),
    )
