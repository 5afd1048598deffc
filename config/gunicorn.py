"""gunicorn's settings for the web process: `gunicorn config.wsgi -c python:config.gunicorn`
(Dockerfile, docker-compose.yml, docs/operations.md "Metrics").

Why a settings module: the latency histograms of /metrics (system/metrics.py) are observed in
the process that served the request, and gunicorn's workers are separate processes. A scrape
reaches one of them, so without this every scrape showed one worker's share, a different
worker each time. Here prometheus_client's multiprocess mode is on for every worker: each
writes its samples to files in one directory, and /metrics sums the files of all of them.

The directory is `PROMETHEUS_MULTIPROC_DIR` when set (emptied when gunicorn starts: files of
a previous run would be counted again), else a fresh temporary one, removed when gunicorn
exits. It is set here, while the settings load, so the workers inherit it even when the app
is preloaded in the master. Options given on the command line win over this module's (it
sets none).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from prometheus_client import multiprocess

ENV = "PROMETHEUS_MULTIPROC_DIR"
# Set when this module made the directory (it then removes it at exit).
CREATED_ENV = "GRAPHLOOM_METRICS_DIR_CREATED"

if not os.environ.get(ENV):
    os.environ[ENV] = tempfile.mkdtemp(prefix="graphloom-metrics-")
    os.environ[CREATED_ENV] = os.environ[ENV]


def on_starting(server: Any) -> None:
    """Before any worker starts: an empty directory."""
    directory = Path(os.environ[ENV])
    directory.mkdir(parents=True, exist_ok=True)
    for path in directory.iterdir():
        if path.is_file() and path.suffix == ".db":
            path.unlink()


def child_exit(server: Any, worker: Any) -> None:
    """A worker ended (restarted, killed, or the server stopping): its gauges' files go; its
    counters and histograms stay in the sums, as counts that happened."""
    multiprocess.mark_process_dead(worker.pid)


def on_exit(server: Any) -> None:
    created = os.environ.get(CREATED_ENV)
    if created and created == os.environ.get(ENV):
        shutil.rmtree(created, ignore_errors=True)
