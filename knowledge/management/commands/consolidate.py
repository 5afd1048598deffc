"""`manage.py consolidate --workspace SLUG [--source ID] [--json]`: apply the consolidation
tiers to existing entities (after changing thresholds or name rules, or to tidy a
workspace). Automatic merges are logged and undone like manual ones; doubtful pairs go to
the review queue once. Idempotent. Exit codes: 0 done, 2 usage."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from tqdm import tqdm

from ingest.management.options import source_for_command
from knowledge.actions.consolidation import do_consolidate
from knowledge.selectors.curation import get_entities_to_consolidate
from workspaces.commands import workspace_for_command


class Command(BaseCommand):
    help = "Merge duplicate entities and queue doubtful pairs for review."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument("--source", type=int, metavar="ID", help="only entities it mentions")
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(
        self, *args: Any, workspace: str, source: int | None, as_json: bool, **options: Any
    ) -> None:
        ws = workspace_for_command(workspace)
        src = source_for_command(ws, source)
        total = get_entities_to_consolidate(ws, source=src).count()
        with tqdm(total=total, unit="entity", file=sys.stderr, disable=None) as bar:

            def advance(count: int) -> None:
                bar.update(count)

            report = do_consolidate(workspace=ws, source=src, progress=advance)
        if as_json:
            self.stdout.write(json.dumps(asdict(report)))
            return
        self.stdout.write(
            f"{report.entities} entities: {report.merged} merged automatically (undo with "
            f"unmerge), {report.suggested} new suggestion(s) for review, {report.rekeyed} rekeyed"
        )
