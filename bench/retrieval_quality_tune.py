"""Tuning the fusion for retrieval quality (issue 16), without overfitting the questions.

    .venv/bin/python bench/retrieval_quality_tune.py [--questions FILE] [--out FILE.json]
        [--top 25]

Runs on the workspace bench/retrieval_quality.py built (`python-docs-rq`, database
`graphloom_bench_rq`; build it first). Each labelled question goes once through the real
`hybrid_search` at hops 1 and 2, and what fusion receives is kept: the vector, keyword and
graph rankings, the recognised entities with their specificity, and each candidate chunk's
entity coverage and document. Every configuration of the grid (graph weight, per-signal
caps, a cap of graph-only chunks in the first ten, entity-coverage reranking depth and
weights) is then fused from those through the same functions the search calls
(`fuse_chunks`, `rerank`) and scored by MRR@10 with its paired bootstrap interval against
the best single signal (vector).

The questions are split by their line in the file: configurations are chosen on the
odd-numbered lines only and reported on the even-numbered lines (held out) and on all.
Prints the best configurations by the odd half and writes every one to `--out`. The
figures to publish come from bench/retrieval_quality.py run with the chosen RETRIEVAL_*
variables, which goes through the search itself.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run(
        "bench.retrieval_quality_tune_run",
        env={"GRAPHLOOM_DB_NAME": "graphloom_bench_rq"},
        drop_env_prefixes=("LLM_", "EXTRACTION_", "RETRIEVAL_"),
    )
