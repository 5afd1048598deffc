"""`manage.py ask "QUESTION" --workspace SLUG [--mode global] [--json]`: an answer citing
the workspace's passages, from a shell. `--json` prints what
`POST /api/v1/workspaces/{slug}/ask` answers. Without an LLM it prints the passages and
says answers need one. Exit codes: 0 done, 1 the LLM failed, 2 usage (unknown workspace,
invalid question or option), 3 the workspace's monthly answer budget is spent."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.actions.ask import AnswerBudgetSpent, AskFailed, do_ask
from knowledge.answering.payload import answer_payload
from knowledge.answering.types import Answer
from system.llm.quoted_text import CONTROL_AND_FORMAT, strip_invisible
from workspaces.commands import workspace_for_command
from workspaces.errors import DomainError, InvalidInput


def _plain(text: str) -> str:
    """Document or LLM text for a terminal: no escape sequences or control characters."""
    return strip_invisible(text, keep="\n", drop=CONTROL_AND_FORMAT)


class Command(BaseCommand):
    help = "Answer a question from a workspace's documents, citing passages."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question")
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument("--mode", choices=["local", "global"], default="local")
        parser.add_argument("--limit", type=int, default=8, metavar="N")
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args: Any, **options: Any) -> None:
        ws = workspace_for_command(options["workspace"])
        if not 1 <= options["limit"] <= 20:
            raise CommandError("--limit must be between 1 and 20.", returncode=2)
        try:
            answer = do_ask(
                workspace=ws,
                question=options["question"],
                mode=options["mode"],
                limit=options["limit"],
            )
        except InvalidInput as exc:
            raise CommandError(exc.message, returncode=2) from exc
        except AnswerBudgetSpent as exc:
            raise CommandError(exc.message, returncode=3) from exc
        except (AskFailed, DomainError) as exc:
            raise CommandError(exc.message, returncode=1) from exc
        if options["as_json"]:
            self.stdout.write(json.dumps(answer_payload(answer)))
            return
        self._print(answer)

    def _print(self, answer: Answer) -> None:
        write = self.stdout.write
        for warning in answer.warnings:
            self.stderr.write(f"warning: {warning}")
        if answer.answer is not None:
            write(_plain(answer.answer))
            write("")
        for c in answer.citations:
            write(
                f"[{c.n}] {_plain(c.document_title)[:120]} (document {c.document_id}, chunk "
                f"{c.chunk_id}, chars {c.char_start}-{c.char_end})"
            )
        if answer.answer is None or not answer.citations:
            write(f"{len(answer.passages)} passage(s):")
            for p in answer.passages:
                write(
                    f"[{p.n}] {_plain(p.document_title or p.path)[:120]} (document "
                    f"{p.document_id}, chars {p.char_start}-{p.char_end})"
                )
                write("    " + " ".join(_plain(p.text).split())[:200])
        if answer.usage is not None:
            cost = "" if answer.usage.cost is None else f", cost {answer.usage.cost:.6f}"
            write(
                f"tokens: {answer.usage.prompt_tokens} prompt, "
                f"{answer.usage.completion_tokens} completion{cost}"
            )
