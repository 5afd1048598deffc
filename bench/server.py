"""A production server for the browser and HTTP benches (bench/explorer.py,
bench/community_map.py): gunicorn with config.settings.production on the bench database
(GRAPHLOOM_DB_NAME, set by the bench before it calls these), static files collected with
hashed names as in a deployment."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_env() -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "bench-only-not-secret-" + "x" * 40,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "GRAPHLOOM_SSL_REDIRECT": "0",
        "GRAPHLOOM_SECURE_COOKIES": "0",
        "GRAPHLOOM_DB_NAME": os.environ["GRAPHLOOM_DB_NAME"],
    }


def collect_static() -> None:
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=ROOT,
        env=server_env(),
        check=True,
    )


def start_server(port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "2", "--threads", "4", "--worker-class", "gthread",
         "--timeout", "180", "--log-level", "warning"],
        cwd=ROOT, env=server_env(), start_new_session=True,
    )  # fmt: skip


def wait_for(base: str) -> None:
    import httpx

    for _ in range(240):
        try:
            if httpx.get(f"{base}/api/v1/health", timeout=5).status_code in (200, 503):
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError("the server did not start")
