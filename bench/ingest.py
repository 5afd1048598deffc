"""Ingestion benchmark (issue 3): throughput, overhead against the model, re-ingest, memory.

    .venv/bin/python bench/ingest.py [--runs 3] [--docs 200] [--skip-pdf] [--thread-scaling]
        [--data-parallel]

Measures, on a generated corpus of mixed formats (Markdown, text, HTML, JSON, PDF, DOCX):
1. end-to-end documents/s and chunks/s (files → parsed → chunked → embedded → stored),
   running the pipeline's own code in this process, as `ingest --wait` does;
2. the ratio of that throughput to `model.encode` alone on the same chunk texts, in the same
   process with the same batch size (goal >= 0.85; issue 20: >= 0.95), and where the cores
   went: CPU seconds of this process (every thread) and its parser child, of the database
   server, and of the model alone; with --thread-scaling, the model alone on one torch
   thread against one per core, and with --data-parallel in one process against one
   single-threaded process per core, each encoding a share;
3. re-ingesting the unchanged corpus as a fraction of the first ingest's time (goal <= 0.05);
4. peak RSS of a real worker process (and, separately, of its parser child) while it ingests
   a 50 MB PDF (goal < 1.5 GB).
It uses its own database (`graphloom_bench`) on the embedded server and a temporary media
directory; figures go to docs/BENCHMARKS.md by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    # Set-up happens only when run as a script: the parser's child process (multiprocessing
    # "spawn") imports this file again and must stay light.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run(
        "bench.ingest_run",
        media_prefix="graphloom-bench-media-",
    )
