"""`manage.py sync_graph --workspace SLUG [--backend ALIAS] [--json]`: rebuild a workspace's
graph projection (Neo4j) from Postgres, with a progress bar.

The write path keeps the projection in step after every change; this is the repair when it
fell behind (the server was down, a `graph_sync_failed` line in the logs) and the first fill
of a new projection. With a backend that reads Postgres directly there is nothing to do.
Exit codes: 0 done (or nothing to project), 1 the backend failed (unreachable, refused),
2 usage.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from knowledge.graph.base import GraphBackendError
from knowledge.graph.sync import SyncReport, do_sync_workspace
from workspaces.commands import workspace_for_command


class Command(BaseCommand):
    help = "Rebuild a workspace's graph projection (Neo4j) from Postgres."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument(
            "--backend",
            default="default",
            metavar="ALIAS",
            help="the GRAPH_BACKENDS entry to rebuild (default: default)",
        )
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(
        self, *args: Any, workspace: str, backend: str, as_json: bool, **options: Any
    ) -> None:
        ws = workspace_for_command(workspace)
        if backend not in settings.GRAPH_BACKENDS:
            known = ", ".join(sorted(settings.GRAPH_BACKENDS)) or "none"
            raise CommandError(
                f"No graph backend {backend!r} in GRAPH_BACKENDS (configured: {known}).",
                returncode=2,
            )
        with tqdm(
            total=0, unit="row", desc=f"sync {workspace}", file=sys.stderr, disable=None
        ) as bar:

            def advance(report: SyncReport) -> None:
                bar.total = report.entities_total + report.relations_total
                bar.n = report.entities + report.relations
                bar.refresh()

            try:
                report = do_sync_workspace(workspace=ws, alias=backend, progress=advance)
            except (GraphBackendError, ImproperlyConfigured) as exc:
                if as_json:
                    self.stdout.write(json.dumps({"ok": False, "error": str(exc)}))
                raise CommandError(f"sync_graph failed: {exc}", returncode=1) from exc
        if as_json:
            self.stdout.write(json.dumps({"ok": True, **report.as_dict()}))
        elif not report.projected:
            self.stdout.write(
                f"Graph backend {backend!r} ({report.backend}) reads Postgres directly: "
                "nothing to project."
            )
        else:
            self.stdout.write(
                f"workspace {workspace}: {report.entities} entities and {report.relations} "
                f"relations projected to {backend!r} in {report.seconds:.1f}s"
            )
