"""`manage.py serve`: the web server and the task worker together, for `make run`.

Why not two terminals: a newcomer runs one command and gets a working app. Ctrl-C (or
SIGTERM) stops both children cleanly, then the embedded database if this command started it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from system import embedded_postgres


class Command(BaseCommand):
    help = "Run the web server and the background worker until Ctrl-C stops both."
    # System checks connect to the database (GeneratedField asks the server's version), which
    # would start the embedded server before we can tell whether this command started it.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument(
            "--keep-db", action="store_true", help="leave the embedded database running on exit"
        )
        parser.add_argument(
            "--migrate", action="store_true", help="apply pending migrations before starting"
        )

    def handle(
        self, *args: Any, addrport: str, keep_db: bool, migrate: bool, **options: Any
    ) -> None:
        pgdata = Path(settings.GRAPHLOOM_PGDATA).resolve()
        embedded = not settings.DATABASE_URL
        started_db = False
        if embedded:
            started_db = embedded_postgres.running_server(pgdata) is None
            server = embedded_postgres.ensure_server(pgdata)
            self.stdout.write(f"Embedded PostgreSQL: {pgdata} (pid {server.pid})")
        self.check()
        if migrate:
            call_command("migrate", interactive=False, verbosity=1)

        manage = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py")]
        # Each child leads its own process group: the terminal's Ctrl-C reaches only us, and we
        # stop each group once (runserver's autoreloader is a parent with a child of its own).
        children = {
            "web": subprocess.Popen([*manage, "runserver", addrport], process_group=0),  # noqa: S603
            "worker": subprocess.Popen([*manage, "worker", "--no-reload"], process_group=0),  # noqa: S603
        }
        self.stdout.write(f"Graphloom is starting on http://{addrport}/  (Ctrl-C stops it)")

        stopping = False

        def stop(signum: int, frame: FrameType | None) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        exit_code = 0
        while not stopping:
            for name, child in children.items():
                if child.poll() is not None:
                    self.stderr.write(f"{name} exited with status {child.returncode}; stopping.")
                    exit_code = child.returncode or 1
                    stopping = True
            time.sleep(0.2)

        for child in children.values():
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGTERM)
        for name, child in children.items():
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.stderr.write(f"{name} did not stop in time; killing it.")
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
        if embedded and started_db and not keep_db:
            embedded_postgres.stop_server(pgdata)
            self.stdout.write("Embedded PostgreSQL stopped.")
        self.stdout.write("Stopped.")
        if exit_code:
            sys.exit(exit_code)
