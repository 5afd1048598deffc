"""`manage.py stats --workspace SLUG [--json]`: the size and shape of a workspace's graph —
active entities and relations by type, the degree distribution, and the sources, documents,
chunks and evidence it was built from. `--json` prints what `GET
/api/v1/workspaces/{slug}/stats` answers. Exit codes: 0 done, 1 the graph backend could
not answer, 2 usage (unknown workspace)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.graph.base import GraphBackendError
from knowledge.selectors.graph import get_workspace_stats
from workspaces.commands import workspace_for_command


def _by_count(counts: dict[str, int]) -> str:
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{name} {count}" for name, count in ordered) or "none"


class Command(BaseCommand):
    help = "Counts of a workspace's graph: entities, relations, types, degrees, evidence."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args: Any, workspace: str, as_json: bool, **options: Any) -> None:
        ws = workspace_for_command(workspace)
        try:
            stats = get_workspace_stats(ws)
        except GraphBackendError as exc:
            raise CommandError(f"Graph backend: {exc}", returncode=1) from exc
        if as_json:
            self.stdout.write(json.dumps(stats))
            return
        counts = stats["counts"]
        distribution = ", ".join(f"{k}: {v}" for k, v in stats["degree_distribution"].items())
        self.stdout.write(
            "\n".join(
                [
                    f"Workspace {ws.slug} (graph backend {stats['backend']})",
                    f"Entities: {stats['entities']} active — "
                    f"{_by_count(stats['entities_by_type'])}",
                    f"Relations: {stats['relations']} active — "
                    f"{_by_count(stats['relations_by_type'])}",
                    f"Degree: max {stats['max_degree']}, mean {stats['mean_degree']:.2f}; "
                    f"entities by degree: {distribution or 'none'}",
                    f"Built from {counts['sources']} source(s), {counts['documents']} "
                    f"document(s), {counts['chunks']} chunk(s); {counts['mentions']} "
                    f"mention(s), {counts['relation_evidence']} relation evidence row(s)",
                    f"Orphan entities (active, no mention): {counts['orphan_entities']}",
                ]
            )
        )
