"""`manage.py prune --workspace SLUG --older-than 90d [--dry-run] [--json]`: delete chunks
that were never retrieved, are older than the age given (90d, 12h, 30m) and are evidence
for nothing (no mention, no relation evidence); report orphan entities (active, without a
mention) without deleting them. `--dry-run` counts and deletes nothing. Exit codes: 0 done,
2 usage (unknown workspace, unreadable age)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.actions.maintenance import do_prune, parse_age
from workspaces.commands import workspace_for_command
from workspaces.errors import InvalidInput


class Command(BaseCommand):
    help = "Delete old, never-retrieved chunks that are no evidence; report orphan entities."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument("--older-than", required=True, metavar="AGE", help="e.g. 90d, 12h, 30m")
        parser.add_argument("--dry-run", action="store_true", help="count, delete nothing")
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(
        self,
        *args: Any,
        workspace: str,
        older_than: str,
        dry_run: bool,
        as_json: bool,
        **options: Any,
    ) -> None:
        ws = workspace_for_command(workspace)
        try:
            age = parse_age(older_than)
        except InvalidInput as exc:
            raise CommandError(exc.message, returncode=2) from exc
        report = do_prune(workspace=ws, older_than=age, dry_run=dry_run, label=older_than)
        if as_json:
            self.stdout.write(json.dumps(report.as_dict()))
            return
        verb = "would be deleted (dry run)" if dry_run else "deleted"
        count = report.chunks_eligible if dry_run else report.chunks_deleted
        lines = [
            f"{count} chunk(s) in {report.documents_touched} document(s) {verb}: created before "
            f"{report.cutoff:%Y-%m-%d %H:%M} UTC, never retrieved, evidence for nothing.",
            f"{report.orphan_entities} orphan entit{'y' if report.orphan_entities == 1 else 'ies'}"
            " (active, no mention; not deleted — review, then delete or keep):",
        ]
        lines += [f"  {o['id']}  {o['name']!r} ({o['type']})" for o in report.orphans]
        if report.orphan_entities > len(report.orphans):
            lines.append(f"  … and {report.orphan_entities - len(report.orphans)} more")
        self.stdout.write("\n".join(lines))
