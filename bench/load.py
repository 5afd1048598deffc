"""API load benchmark (issue 7).

    .venv/bin/python bench/load.py [--clients 50] [--seconds 60] [--entities 20000]
                                   [--chunks 20000] [--workers 2] [--threads 8]
                                   [--keep] [--reuse]

A workspace is filled with synthetic entities, relations, documents, chunks (random unit
embeddings of the real dimension) and mentions; then a production server is started
(`gunicorn config.wsgi` with config.settings.production, gthread workers) and `--clients`
concurrent clients, each with its own keep-alive connection and a real bearer token, mix
for `--seconds`: hybrid search (POST search, 30 %), 2-hop neighbourhoods (GET
entities/{id}/neighborhood, 35 %) and entity reads (GET entities/{id}, 35 %). Printed as
JSON: requests, requests/s, errors (non-2xx or transport errors; goal 0) and latency
p50 / p95 / p99 overall and per operation, and the CPU the server (gunicorn workers and
their PostgreSQL backends) spent per request, the figure to compare on a machine other
work shares. Uses its own database (`graphloom_bench`); `--keep` leaves the workspace
for a later `--reuse` run (seeding takes minutes).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run("bench.load_run")
