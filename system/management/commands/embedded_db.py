"""`manage.py embedded_db start|stop|status|destroy`: control the embedded PostgreSQL server.

Only meaningful without DATABASE_URL; with it, the command says so and exits 2.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from system import embedded_postgres


class Command(BaseCommand):
    help = "Start, stop, inspect or delete the embedded PostgreSQL server (var/pgdata)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["start", "stop", "status", "destroy"])
        parser.add_argument("--json", action="store_true", help="status as one JSON line")
        parser.add_argument(
            "--yes", action="store_true", help="destroy without asking for confirmation"
        )

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        if settings.DATABASE_URL:
            raise CommandError(
                "DATABASE_URL is set: there is no embedded server to control.", returncode=2
            )
        pgdata = Path(settings.GRAPHLOOM_PGDATA).resolve()
        if action == "start":
            server = embedded_postgres.ensure_server(pgdata)
            self.stdout.write(f"running: pid {server.pid}, socket {server.socket_dir}")
        elif action == "stop":
            stopped = embedded_postgres.stop_server(pgdata)
            self.stdout.write("stopped" if stopped else "not running")
        elif action == "status":
            running = embedded_postgres.running_server(pgdata)
            status = {
                "pgdata": str(pgdata),
                "running": running is not None,
                "pid": running.pid if running else None,
                "socket_dir": str(running.socket_dir) if running else None,
            }
            if options["json"]:
                self.stdout.write(json.dumps(status))
            else:
                state = f"running (pid {status['pid']})" if running else "stopped"
                self.stdout.write(f"{pgdata}: {state}")
        else:
            self._destroy(pgdata, confirmed=options["yes"])

    def _destroy(self, pgdata: Path, *, confirmed: bool) -> None:
        if not pgdata.exists():
            self.stdout.write(f"{pgdata} does not exist")
            return
        if not confirmed:
            answer = input(f"Delete {pgdata} and every workspace in it? Type 'yes': ")
            if answer.strip() != "yes":
                raise CommandError("Not deleted.")
        embedded_postgres.stop_server(pgdata)
        shutil.rmtree(pgdata)
        self.stdout.write(f"deleted {pgdata}")
