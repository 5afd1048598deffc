"""`manage.py communities --workspace SLUG [--top N] [--show N] [--json] [--no-summaries]`:
detect the communities of a workspace's graph (Louvain, knowledge/graph/communities.py),
store each entity's community number (explorer colours, summaries), and print the largest
ones with their most connected entities. With an LLM configured, the summaries global
answers read are then rewritten for the communities whose members changed (within the
answer budget; `--no-summaries` skips it). Deterministic on an unchanged graph; run it
again after large ingests (or enqueue the `compute_communities` task). Exit codes: 0 done,
1 the numbers could not be stored (database error) or the LLM failed writing summaries,
2 usage."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from knowledge.actions.ask import do_write_community_summaries
from knowledge.actions.communities import SummaryRefresh, do_compute_communities
from knowledge.selectors.communities import community_summaries
from system.llm.client import LlmError
from workspaces.commands import workspace_for_command


class Command(BaseCommand):
    help = "Detect and store the communities of a workspace's graph."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument(
            "--top", type=int, default=5, metavar="N", help="entities listed per community"
        )
        parser.add_argument(
            "--show", type=int, default=10, metavar="N", help="communities listed (largest)"
        )
        parser.add_argument("--json", action="store_true", dest="as_json")
        parser.add_argument(
            "--no-summaries",
            action="store_false",
            dest="summaries",
            help="do not rewrite the LLM's community summaries",
        )

    def handle(
        self,
        *args: Any,
        workspace: str,
        top: int,
        show: int,
        as_json: bool,
        summaries: bool = True,
        **options: Any,
    ) -> None:
        ws = workspace_for_command(workspace)
        if top < 0 or show < 0:
            raise CommandError("--top and --show take a number of 0 or more.", returncode=2)
        try:
            report = do_compute_communities(workspace=ws)
        except DatabaseError as exc:
            raise CommandError(f"Could not store the communities: {exc}", returncode=1) from exc
        refresh = self._summaries(ws) if summaries else None
        largest = community_summaries(workspace=ws, top=top, limit=show)
        if as_json:
            payload = {
                **asdict(report),
                "largest_communities": [asdict(summary) for summary in largest],
                "summaries": _refresh_json(refresh),
            }
            self.stdout.write(json.dumps(payload))
            return
        self.stdout.write(
            f"{report.communities} communities over {report.entities} entities and "
            f"{report.relations} relations (largest {report.largest}, {report.isolated} "
            f"without relations; modularity {report.modularity}); {report.changed} entities "
            f"renumbered in {report.seconds}s"
        )
        if refresh is not None:
            self.stdout.write(
                f"Summaries: {refresh.written} written, {refresh.kept} unchanged, "
                f"{refresh.removed} removed ({refresh.prompt_tokens} + "
                f"{refresh.completion_tokens} tokens, cost {refresh.cost})"
            )
        for summary in largest:
            names = ", ".join(f"{m.name} ({m.degree})" for m in summary.top)
            self.stdout.write(f"  #{summary.id}  {summary.size} entities: {names}")

    def _summaries(self, ws: Any) -> SummaryRefresh | None:
        try:
            return do_write_community_summaries(workspace=ws)
        except LlmError as exc:
            raise CommandError(
                f"Communities stored, but the LLM failed writing their summaries: {exc}",
                returncode=1,
            ) from exc


def _refresh_json(refresh: SummaryRefresh | None) -> dict[str, Any] | None:
    if refresh is None:
        return None
    return {**asdict(refresh), "cost": float(refresh.cost)}
