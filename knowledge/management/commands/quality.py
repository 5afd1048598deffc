"""`manage.py quality --workspace SLUG [--source ID] [--json]`: the quality report of a
workspace's graph, or of what one source contributed to it — entities seen in 2+ chunks,
singletons, orphans, entities per 1,000 words, the typed-relation share, boilerplate
skipped, and the most mentioned suspicious names. `--json` prints what `GET
/api/v1/workspaces/{slug}/quality[?source=ID]` answers. Exit codes: 0 done, 2 usage
(unknown workspace or source)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ingest.management.options import source_for_command
from knowledge.schemas.quality import QualityOut
from knowledge.selectors.quality import get_quality_report
from workspaces.commands import workspace_for_command


def _share(figure: dict[str, Any]) -> str:
    percent = "—" if figure["share"] is None else f"{figure['share'] * 100:.1f}%"
    return f"{figure['count']:,} of {figure['total']:,} ({percent})"


def report_lines(report: dict[str, Any]) -> list[str]:
    source = report["source"]
    scope = f"source {source['id']} ({source['name']}) in " if source else ""
    density = report["entities_per_1000_words"]
    lines = [
        f"Quality of {scope}workspace {report['workspace']}",
        f"Entities: {report['entities']:,} ({report['mentions']:,} mentions); "
        f"{'—' if density is None else f'{density:.2f}'} per 1,000 words "
        f"({report['words']:,} words)",
        f"Seen in 2+ chunks: {_share(report['in_two_or_more_chunks'])}",
        f"Singletons (one mention): {_share(report['singletons'])}",
        f"Orphans (no relation): {_share(report['orphans'])}",
        f"Typed relations (not related_to): {_share(report['typed_relations'])}",
        f"Boilerplate chunks skipped: {_share(report['boilerplate_chunks'])}",
    ]
    if report["suspicious"]:
        lines.append("Suspicious names (most mentioned first): mentions, name, type, id, why")
        lines += [
            f"  {row['mentions']:>6}  {row['name']} ({row['type']}, {row['id']}): {row['reason']}"
            for row in report["suspicious"]
        ]
    else:
        lines.append("Suspicious names: none")
    return lines


class Command(BaseCommand):
    help = "The quality report of a workspace's graph, or of one source's part of it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument("--source", type=int, metavar="ID", help="only what it contributed")
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(
        self, *args: Any, workspace: str, source: int | None, as_json: bool, **options: Any
    ) -> None:
        ws = workspace_for_command(workspace)
        src = source_for_command(ws, source)
        report = get_quality_report(ws, source=src)
        if as_json:
            self.stdout.write(json.dumps(QualityOut.model_validate(report).model_dump(mode="json")))
            return
        self.stdout.write("\n".join(report_lines(report)))
