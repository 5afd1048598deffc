"""`manage.py search "QUERY" --workspace SLUG [--limit N] [--hops N] [--relation-type T ...]
[--entity-type T ...] [--source ID ...] [--json] [--context]`: hybrid retrieval from a shell,
to try a query, compare signals after changing RETRIEVAL_* settings, or script an LLM
prompt. `--json` prints what `POST /api/v1/workspaces/{slug}/search` answers. Searching
from here counts as retrieval (access counts) unless `--no-record`. Exit codes: 0 done,
1 failed, 2 usage (unknown workspace, blank query, out-of-range option)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.retrieval import hybrid_search
from knowledge.retrieval.context import chunk_signal_summary
from knowledge.schemas.search import search_payload
from system.llm.quoted_text import strip_invisible
from workspaces.commands import workspace_for_command
from workspaces.errors import DomainError, InvalidInput


class Command(BaseCommand):
    help = "Search a workspace: ranked chunks with their per-signal scores."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("query")
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument("--limit", type=int, default=10, metavar="N")
        parser.add_argument("--hops", type=int, default=None, metavar="N")
        parser.add_argument("--relation-type", action="append", dest="relation_types")
        parser.add_argument("--entity-type", action="append", dest="entity_types")
        parser.add_argument("--source", action="append", type=int, dest="sources")
        parser.add_argument("--json", action="store_true", dest="as_json")
        parser.add_argument(
            "--context", action="store_true", help="print the Markdown context block too"
        )
        parser.add_argument(
            "--no-record", action="store_false", dest="record", help="do not count access"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        ws = workspace_for_command(options["workspace"])
        try:
            result = hybrid_search(
                workspace=ws,
                query=options["query"],
                limit=options["limit"],
                hops=options["hops"],
                relation_types=options["relation_types"],
                entity_types=options["entity_types"],
                sources=options["sources"],
                record_access=options["record"],
            )
        except InvalidInput as exc:
            raise CommandError(exc.message, returncode=2) from exc
        except DomainError as exc:
            raise CommandError(exc.message, returncode=1) from exc
        if options["as_json"]:
            self.stdout.write(json.dumps(search_payload(result)))
            return
        write = self.stdout.write
        write(
            f"{len(result.chunks)} chunk(s) in {result.took_ms:.0f} ms; signals: "
            f"{', '.join(result.signals_used)}"
        )
        for warning in result.warnings:
            self.stderr.write(f"warning: {warning}")
        for n, chunk in enumerate(result.chunks, start=1):
            # Document text in a terminal: no escape sequences or other control characters.
            title = _plain(chunk.document_title or chunk.document_path)[:120]
            snippet = _plain(chunk.text)[:160]
            write(
                f"{n:>3}. {chunk.score:.4f}  {title} (document {chunk.document_id}, chunk "
                f"{chunk.id}, chars {chunk.char_start}-{chunk.char_end})"
            )
            write(f"     {chunk_signal_summary(chunk)}")
            write(f"     {snippet}")
        if result.entities:
            write(
                "entities: "
                + "; ".join(
                    f"{_plain(e.name)} ({e.type}, {'/'.join(e.why)})" for e in result.entities
                )
            )
        for path in result.paths:
            write("path: " + " - ".join(_plain(n.name) for n in path.nodes))
        if options["context"]:
            write("")
            write(result.context)


def _plain(text: str) -> str:
    return " ".join(strip_invisible(text, to_space=True).split())
