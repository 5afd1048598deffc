"""`manage.py health [--json] [--require database,worker,embedding]`: the health report
for scripts and container health checks. Exit 0 when every required part is healthy, else 1.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from system.selectors import get_health_report

_CHECKS = {
    "database": lambda r: r["database"]["ok"],
    "worker": lambda r: r["worker"]["status"] == "ok",
    "embedding": lambda r: r["embedding"]["status"] == "available",
}


class Command(BaseCommand):
    help = "Print Graphloom's health; exit 1 if a required component is unhealthy."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", dest="as_json")
        parser.add_argument(
            "--require",
            default="database",
            help="comma-separated: database, worker, embedding (default: database)",
        )

    def handle(self, *args: Any, as_json: bool, require: str, **options: Any) -> None:
        required = [name.strip() for name in require.split(",") if name.strip()]
        unknown = sorted(set(required) - set(_CHECKS))
        if unknown:
            raise CommandError(f"Unknown component(s): {', '.join(unknown)}", returncode=2)
        _, report = get_health_report()
        if as_json:
            self.stdout.write(json.dumps(report))
        else:
            worker, embedding = report["worker"], report["embedding"]
            self.stdout.write(f"status: {report['status']}")
            self.stdout.write(f"database: {'ok' if report['database']['ok'] else 'unreachable'}")
            self.stdout.write(f"pgvector: {report['pgvector']['version']}")
            self.stdout.write(
                f"worker: {worker['status']} (age {worker['heartbeat_age_seconds']} s)"
            )
            self.stdout.write(f"embedding: {embedding['model']} {embedding['status']}")
            for name, count in report["counts"].items():
                self.stdout.write(f"{name.replace('_', ' ')}: {count}")
            for name, job in report["upkeep"].items():
                if not job["enabled"]:
                    self.stdout.write(f"upkeep {name}: off")
                    continue
                last = f"{job['outcome']} at {job['last_run']}" if job["last_run"] else "never run"
                self.stdout.write(
                    f"upkeep {name}: {last}; next {job['next_run'] or 'not yet known'}"
                )
        failing = [name for name in required if not _CHECKS[name](report)]
        if failing:
            raise CommandError(f"unhealthy: {', '.join(failing)}", returncode=1)
