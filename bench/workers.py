"""Several workers against one database (issue 20, part 6): ingest throughput with 1, 2
and 4 `manage.py worker` processes, and proof that nothing is processed twice.

    .venv/bin/python bench/workers.py [--docs 96] [--workers 1,2,4] [--docs-per-task 4]
        [--threads-per-worker 0] [--root /usr/share/doc/python3.11/html]

One source of `--docs` real pages of the Python manual (Debian's python3.11-doc: written by
the Python project, nobody here), the same pages for every run, is ingested with the
offline extractor (no LLM: LLM_* and EXTRACTION_* variables are dropped) into a fresh
workspace per run by that many real worker processes, started from this script against one
database (`graphloom_bench_workers`; media in a temporary directory shared by them, as
several hosts would share the media volume). Before each measured run the workers are warmed
up on a separate small source (their models load on their first task), so the figure is the
steady state, not start-up.

Per run it prints one JSON line: workers, wall seconds from enqueueing the source to the
queue being empty and the source finished, chunks/s, the ratio to the first run (1 worker),
the load average, tasks per worker, and the checks that nothing was processed twice:
- every task ran once (no task claimed by two workers, no two tasks with the same
  arguments), every document was in exactly one task;
- the same chunks as the first run (total, and per document), no chunk cut twice;
- the same extraction runs (one per window) as the first run, and no window extracted twice
  (the source's `windows_extracted` equals its runs: a window extracted by two workers
  counts twice there but is stored once), no window answered from the cache where the
  first run had none (a document processed again finds its windows cached);
- no mention or relation evidence stored twice;
and that nothing was lost: no task failed, every document ended `done`, the source did not
stall (still running with no task left to run for 15 s). Exit status 1 when any check fails.

Boilerplate detection is off for the run (GRAPHLOOM_BOILERPLATE_MIN_DOCUMENTS=0): with it
on, documents chunked before their repeated lines were known are chunked again by design
(docs/operations.md, "Boilerplate"), and how many depends on the order in which workers
finish them: a second pass that is meant, which would blur "processed exactly once".
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run(
        "bench.workers_run",
        env={
            "GRAPHLOOM_DB_NAME": "graphloom_bench_workers",
            "GRAPHLOOM_BOILERPLATE_MIN_DOCUMENTS": "0",
            # No scheduled upkeep job (communities, backfill, ...) may join the measured queue.
            "GRAPHLOOM_UPKEEP_CHECK_SECONDS": "0",
        },
        media_prefix="graphloom-bench-workers-media-",
        drop_env_prefixes=("LLM_", "EXTRACTION_"),
    )
