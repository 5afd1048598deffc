"""`manage.py eval_extraction GOLD.jsonl [--workspace SLUG] [--json]`: run the configured
extractor on a gold set and report entity and relation precision / recall / F1, by type.

The matching rule is in knowledge/evaluation.py (and docs/operations.md). Without
--workspace the default schema is used. Nothing is written. Exit codes: 0 done, 1 the
extractor failed, 2 usage (unreadable or malformed gold file, unknown workspace).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.actions.schema import DEFAULT_ENTITY_TYPES, DEFAULT_RELATION_TYPES
from knowledge.evaluation import GoldFileError, evaluate, load_gold
from knowledge.extraction.extractors import get_extractor
from knowledge.extraction.offline import OfflineExtractorUnavailable
from knowledge.extraction.schema import SchemaSnapshot
from knowledge.selectors.schema import get_schema_snapshot
from system.llm.client import LlmError
from workspaces.commands import workspace_for_command


def default_schema() -> SchemaSnapshot:
    import hashlib

    entity = tuple((name, description) for name, description, _ in DEFAULT_ENTITY_TYPES)
    relation = tuple((name, description) for name, description, _ in DEFAULT_RELATION_TYPES)
    digest = hashlib.sha256(json.dumps([entity, relation]).encode()).hexdigest()
    return SchemaSnapshot(entity_types=entity, relation_types=relation, hash=digest)


class Command(BaseCommand):
    help = "Score the configured extractor against a gold JSONL file (precision/recall/F1)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("gold", metavar="GOLD.jsonl")
        parser.add_argument("--workspace", metavar="SLUG", help="use this workspace's schema")
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(
        self, *args: Any, gold: str, workspace: str | None, as_json: bool, **options: Any
    ) -> None:
        try:
            records = load_gold(Path(gold))
        except GoldFileError as exc:
            raise CommandError(str(exc), returncode=2) from exc
        if workspace:
            ws = workspace_for_command(workspace)
            schema = get_schema_snapshot(ws)
            if not schema.entity_types:
                schema = default_schema()
        else:
            schema = default_schema()
        try:
            report = evaluate(records, extractor=get_extractor(), schema=schema)
        except (LlmError, OfflineExtractorUnavailable) as exc:
            raise CommandError(str(exc), returncode=1) from exc
        data = report.as_dict()
        if as_json:
            self.stdout.write(json.dumps(data))
            return
        label = " (offline extractor)" if report.extractor == "offline" else ""
        self.stdout.write(f"{report.records} record(s), {report.extractor} {report.model}{label}")
        self.stdout.write(f"{'':<24} {'P':>6} {'R':>6} {'F1':>6}   tp   fp   fn")
        for title, key in (
            ("entities", "entities"),
            ("entities (any type)", "entities_any_type"),
            ("relations", "relations"),
            ("relations (any type)", "relations_any_type"),
        ):
            self._line(title, data[key])
        for group in ("entity_types", "relation_types"):
            self.stdout.write(f"by {group.replace('_', ' ')[:-1]}:")
            for name, row in data[group].items():
                self._line(f"  {name}", row)

    def _line(self, title: str, row: dict[str, Any]) -> None:
        self.stdout.write(
            f"{title:<24} {row['precision']:>6.3f} {row['recall']:>6.3f} {row['f1']:>6.3f} "
            f"{row['tp']:>4} {row['fp']:>4} {row['fn']:>4}"
        )
