"""Retrieval quality on a real manual (issue 16): do the graph and the fusion find the page
that answers a question better than each signal alone?

    .venv/bin/python bench/retrieval_quality.py [--root /usr/share/doc/python3.11/html]
        [--questions bench/data/python-docs-questions.jsonl ...] [--reuse] [--out FILE.json]

A workspace (`python-docs-rq`) is built from a fixed list of pages of the Python 3.11
manual — Debian's python3.11-doc, written by the Python project, nobody here: every page
the labelled questions name as an answer (library, tutorial and HOWTO pages), and 16 pages
that answer none of them (big reference pages such as stdtypes, exceptions and io, and
neighbours of answering pages such as asyncio-eventloop) as distractors. The files are
uploaded through the real ingest action (paths like `library/asyncio-task.html`) and run
through the whole pipeline in this process with the offline extractor (LLM_* and
EXTRACTION_* variables are dropped). `--reuse` keeps a workspace built before and only
measures: fusion can then be tuned through the RETRIEVAL_* variables, which are honoured
and printed.

Then `manage.py eval_retrieval` scores the labelled questions
(bench/data/python-docs-questions.jsonl: paraphrased questions, each with the page(s) that
answer it) on five rankings in the same run — vector only, keyword only, hybrid without the
graph, hybrid with the graph at hops 1 and 2 — and this prints its table, each ranking's
MRR@10 margin over the best single signal with its paired bootstrap 95 % interval on the
odd-numbered lines of the questions file (where the fusion is tuned:
bench/retrieval_quality_tune.py), the even-numbered ones (held out) and all, the JSON
figures (with the workspace's size and the RETRIEVAL_* settings used), and writes them to
`--out` when given. Uses its own database (`graphloom_bench_rq`) on the embedded server.

A second set, bench/data/python-docs-questions-heldout.jsonl, was written independently
and frozen before it was first measured; nothing is tuned on it, and it names only pages
already in the workspace (the build takes the union of both files' answer pages). Score it
with `--reuse --questions bench/data/python-docs-questions-heldout.jsonl`, or both sets as
one with `--questions bench/data/python-docs-questions.jsonl
bench/data/python-docs-questions-heldout.jsonl`; any other file than the first is reported
on all its questions only (the odd/even halves belong to the first file).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run(
        "bench.retrieval_quality_run",
        env={
            "GRAPHLOOM_DB_NAME": "graphloom_bench_rq",
        },
        media_prefix="graphloom-rq-media-",
        drop_env_prefixes=("LLM_", "EXTRACTION_"),
    )
