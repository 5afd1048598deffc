"""Hybrid retrieval benchmark (issue 7).

    .venv/bin/python bench/retrieval.py [--chunks 100000] [--entities 50000] [--queries 200]
                                        [--limit 10] [--hops 1 2] [--keep] [--reuse]

A workspace is filled with `--chunks` chunks of synthetic text (words drawn with a Zipf
law from the ~20k English words of the embedding model's vocabulary, so the tsvector, the
stemmer and the stopwords see real words, common and rare), each with a random unit vector
of the real dimension (384, stored under the model's id so the vector signal compares with
it), and `--entities` entities (generated names of people, organisations, places and
products, with name vectors and some aliases); each chunk names one to four entities
(popularity is a power law: a few hubs are in thousands of chunks), and those become
mentions; entities named together become relations with evidence. Then `--queries` queries
(entity questions, keyword queries, natural-language questions, pairs of entities) run
through `knowledge.retrieval.hybrid_search` with access recording on, as the API calls it.

The query embedding is computed once per query outside the timer (the packaged model when
it loads, else a random vector). Reported as JSON: latency p50 / p95 / p99 / max per hops
setting (goal: p95 <= 50 ms), each stage's p50 / p95 (vector, keyword, recognition, graph,
fusion, hydrate, paths, access, context), and how often each signal contributed. Uses its
own database (`graphloom_bench`) on the embedded server; `--keep` leaves the workspace for a
later `--reuse` run (loading 100k chunks takes minutes).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run("bench.retrieval_run")
