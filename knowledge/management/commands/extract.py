"""`manage.py extract --workspace SLUG [--source ID] [--force] [--estimate]`: extract (or
re-extract) entities and relations from processed documents, inline, with a progress bar.

Cached windows cost nothing, so this is also how a source continues after its token budget
was raised (`--token-budget N` sets it) or its LLM came back. `--estimate` prints tokens and
cost without calling anything. Exit codes: 0 done, 1 failed or stopped by the budget,
2 usage.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from ingest.actions.sources import do_set_source_options, validate_source_options
from ingest.models import Source
from ingest.selectors import get_source_for_workspace
from knowledge.actions.extraction.documents import do_extract_source
from knowledge.actions.extraction.estimate import estimate_source
from knowledge.extraction.offline import OfflineExtractorUnavailable
from knowledge.prompts import PromptNotFound
from system.llm.client import LlmError
from workspaces.commands import workspace_for_command
from workspaces.errors import DomainError
from workspaces.models import Workspace


class Command(BaseCommand):
    help = "Extract entities and relations from processed documents (cache-aware)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument("--source", type=int, metavar="ID", help="only this source")
        parser.add_argument(
            "--force", action="store_true", help="ignore the cache: extract every window again"
        )
        parser.add_argument(
            "--estimate", action="store_true", help="print tokens and cost; call nothing"
        )
        parser.add_argument(
            "--token-budget",
            type=int,
            metavar="N",
            help="set the source's LLM token budget first (0: the server default)",
        )
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(
        self,
        *args: Any,
        workspace: str,
        source: int | None,
        force: bool,
        estimate: bool,
        token_budget: int | None,
        as_json: bool,
        **options: Any,
    ) -> None:
        ws = workspace_for_command(workspace)
        try:
            sources = self._sources(ws, source)
            if token_budget is not None:
                if source is None:
                    raise CommandError("--token-budget needs --source.", returncode=2)
                sources = [
                    do_set_source_options(
                        source=sources[0],
                        options=validate_source_options(token_budget=token_budget),
                    )
                ]
            if estimate:
                self._estimate(sources, force=force, as_json=as_json)
                return
            self._extract(sources, force=force, as_json=as_json)
        except (LlmError, OfflineExtractorUnavailable, PromptNotFound) as exc:
            raise CommandError(str(exc), returncode=1) from exc
        except DomainError as exc:
            raise CommandError(exc.message, returncode=2) from exc

    def _sources(self, ws: Workspace, source_id: int | None) -> list[Source]:
        if source_id is not None:
            return [get_source_for_workspace(ws, source_id)]
        return list(Source.objects.for_workspace(ws).order_by("pk"))

    def _estimate(self, sources: list[Source], *, force: bool, as_json: bool) -> None:
        rows = [
            {"source_id": s.pk, **estimate_source(source=s, force=force).as_dict()} for s in sources
        ]
        total = {
            key: sum(row[key] for row in rows)
            for key in ("windows", "cached_windows", "windows_to_extract", "prompt_tokens",
                        "completion_tokens", "total_tokens", "cost")
        }  # fmt: skip
        if as_json:
            self.stdout.write(json.dumps({"sources": rows, "total": total}))
            return
        for row in rows:
            self.stdout.write(
                f"source {row['source_id']}: {row['windows_to_extract']} of {row['windows']} "
                f"window(s) to extract ({row['cached_windows']} cached) with {row['extractor']} "
                f"{row['model']}: ~{row['prompt_tokens']:,} prompt + "
                f"~{row['completion_tokens']:,} completion tokens, ~${row['cost']:.4f}"
                + (f" (budget {row['budget']:,})" if row["budget"] else "")
            )
        self.stdout.write(
            f"total: ~{total['total_tokens']:,} tokens, ~${total['cost']:.4f} "
            "(estimates: prices from LLM_PRICE_INPUT_PER_MTOK / LLM_PRICE_OUTPUT_PER_MTOK)"
        )

    def _extract(self, sources: list[Source], *, force: bool, as_json: bool) -> None:
        failed = stopped = False
        rows = []
        for source in sources:
            with tqdm(
                total=0, unit="window", desc=f"source {source.pk}", file=sys.stderr, disable=None
            ) as bar:

                def on_windows(count: int, bar: Any = bar) -> None:
                    bar.total = (bar.total or 0) + count
                    bar.refresh()

                def advance(count: int, bar: Any = bar) -> None:
                    bar.update(count)

                report = do_extract_source(
                    source=source, force=force, progress=advance, on_windows=on_windows
                )
            row = {
                "source_id": source.pk,
                "extractor": report.extractor,
                "model": report.model,
                "documents": report.documents,
                "windows": report.windows,
                "cached": report.cached,
                "extracted": report.extracted,
                "skipped_for_budget": report.skipped_for_budget,
                "error": report.error,
            }
            rows.append(row)
            failed = failed or bool(report.error)
            stopped = stopped or bool(report.skipped_for_budget)
            if not as_json:
                label = " (offline extractor)" if report.extractor == "offline" else ""
                self.stdout.write(
                    f"source {source.pk}: {report.documents} document(s), {report.windows} "
                    f"window(s): {report.extracted} extracted, {report.cached} from the cache"
                    f"{label}"
                )
                if report.skipped_for_budget:
                    source.refresh_from_db()
                    self.stderr.write(f"source {source.pk}: {source.warning}")
                if report.error:
                    self.stderr.write(f"source {source.pk}: extraction failed: {report.error}")
        if as_json:
            self.stdout.write(json.dumps({"sources": rows}))
        if failed or stopped:
            raise CommandError(
                "Extraction failed for some windows." if failed else "Stopped by a token budget.",
                returncode=1,
            )
