"""/metrics under gunicorn with the shipped settings module (config/gunicorn.py): the latency
histograms are summed over every worker process, those that have exited included, and a
new start does not count the previous run's requests again.

The workers are made to come and go deterministically: one worker, restarted by gunicorn
after every few requests (`--max-requests`), so the requests of one test are served by
several processes in turn and the scrape by yet another. Without multiprocess mode the
scrape would see only its own process's share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from tests.knowledge.graph_data import make_graph
from tests.support import fetch, free_port, stop_process, subprocess_env, wait_for
from tests.system.metrics_text import value

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

TOKEN = "metrics-scraper-secret-0123456789"
REQUESTS_PER_WORKER = 3


def start_gunicorn(port: int, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi", "-c", "python:config.gunicorn",
         "--bind", f"127.0.0.1:{port}", "--workers", "1",
         "--max-requests", str(REQUESTS_PER_WORKER), "--max-requests-jitter", "0",
         "--access-logfile", "-", "--access-logformat", "served-by %(p)s",
         "--log-level", "warning"],
        env=subprocess_env(METRICS_TOKEN=TOKEN, **env),
        cwd=settings.BASE_DIR,
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def get(url: str, token: str) -> tuple[int, str]:
    """(status, body) of an authenticated GET through a fresh connection (one request each,
    so each counts towards the worker's `--max-requests`)."""
    status, _, body = fetch(url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return status, body


def serve_paths(
    directory: Path, url: str, token: str, count: int
) -> tuple[float | None, list[str]]:
    """Start gunicorn on `directory`, ask `count` paths, scrape; the path count and the pid
    that served each request, in order."""
    port = free_port()
    server = start_gunicorn(port, PROMETHEUS_MULTIPROC_DIR=str(directory))
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: fetch(f"{base}/api/v1/health")[0] in (200, 503), what="gunicorn")
        for _ in range(count):
            assert get(f"{base}{url}", token)[0] == 200
        status, text = get(f"{base}/metrics", TOKEN)
        assert status == 200
        counted = value(text, "graphloom_graph_query_duration_seconds_count", query="path")
    finally:
        stop_process(server)
    log = server.stdout.read() if server.stdout else ""
    return counted, [line.split()[1] for line in log.splitlines() if line.startswith("served-by")]


@pytest.mark.slow(reason="gunicorn with several workers")
def test_latencies_are_summed_over_every_gunicorn_worker_and_reset_at_start(alice, tmp_path):
    built = make_graph(
        alice.workspace,
        entities={"Harbour Crane": "concept", "Port Authority": "organization"},
        relations=[("Port Authority", "Harbour Crane", "part_of")],
    )
    crane, port = built.entities["Harbour Crane"].pk, built.entities["Port Authority"].pk
    url = f"/api/v1/workspaces/acme/path?from={port}&to={crane}"
    directory = tmp_path / "metrics"

    counted, served_by = serve_paths(directory, url, alice.plaintext, 7)
    # 7 paths, the health check (asked again while a loaded machine starts gunicorn
    # slowly) and the scrape: a new worker every 3 requests, so at least three.
    assert len(served_by) >= 9
    assert len(set(served_by)) == -(-len(served_by) // REQUESTS_PER_WORKER) >= 3
    assert counted == 7

    # A new start empties the directory it was given: only its own requests count.
    counted, _ = serve_paths(directory, url, alice.plaintext, 2)
    assert counted == 2


def test_without_a_directory_a_temporary_one_is_made_and_removed_at_exit(tmp_path):
    script = (
        "import json, os\n"
        "import config.gunicorn as g\n"
        "made = os.environ['PROMETHEUS_MULTIPROC_DIR']\n"
        "g.on_starting(None)\n"
        "existed = os.path.isdir(made)\n"
        "g.on_exit(None)\n"
        "print(json.dumps([made, existed, os.path.exists(made)]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True,
        cwd=settings.BASE_DIR,
    )  # fmt: skip
    made, existed, still_there = json.loads(done.stdout)
    assert made and existed and not still_there
