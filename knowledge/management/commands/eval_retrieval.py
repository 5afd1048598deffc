"""`manage.py eval_retrieval QUESTIONS.jsonl --workspace SLUG [--json]`: how well retrieval
finds the documents that answer labelled questions, for five rankings in one run over the
same workspace — vector only, keyword only, hybrid without the graph (hops 0), and hybrid
with the graph at hops 1 and 2 — as hit@1, hit@5, MRR@10 and nDCG@10.

QUESTIONS.jsonl holds one JSON object per line:

    {"question": "how do I wait for several coroutines at once?",
     "answers": ["library/asyncio-task.html", "snippet:Run awaitable objects"],
     "snippets": ["optional: more chunk text that answers it"]}

An answer matches a document when it is a substring of the document's URL or path, or,
prefixed `snippet:` (or listed in "snippets"), a substring of the text of one of its chunks;
case and whitespace are ignored. Relevance is per document: a ranking's chunks count as
their documents, each at the rank of its best chunk (knowledge/retrieval/evaluation.py).

Then every ranking is compared with the best single signal (vector or keyword, whichever
has the higher MRR@10) question by question: the mean difference of reciprocal ranks, a
paired bootstrap 95 % confidence interval of it (10,000 resamples, fixed seed) and
wins / ties / losses; a margin is clear when the interval's lower bound is above 0
(`margins` in --json).

The searches are the real hybrid search with some signals left out
(knowledge/retrieval/comparison.py), record no access, and write nothing. Exit codes:
0 done, 2 usage (unknown workspace, unreadable or malformed questions file), 1 any other
failure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.retrieval.comparison import Comparison, compare_rankings
from knowledge.retrieval.evaluation import (
    BOOTSTRAP_RESAMPLES,
    CONFIDENCE,
    CUTOFF,
    QuestionFileError,
    load_questions,
)
from knowledge.retrieval.limits import MAX_LIMIT
from workspaces.commands import workspace_for_command
from workspaces.errors import DomainError

HELP = """Score retrieval against labelled questions: hit@1, hit@5, MRR@10 and nDCG@10 for
vector only, keyword only, hybrid without the graph and hybrid with the graph (hops 1, 2),
and each ranking's MRR@10 margin over the best single signal with a paired bootstrap 95%
confidence interval (clear when its lower bound is above 0).
QUESTIONS.jsonl: one {"question": "...", "answers": ["URL or path substring",
"snippet:chunk text substring"], "snippets": [optional]} per line; relevance is per
document (case and whitespace ignored)."""


class Command(BaseCommand):
    help = HELP

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "questions", metavar="QUESTIONS.jsonl", help="labelled questions, JSON lines"
        )
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="print the figures as JSON"
        )

    def handle(
        self, *args: Any, questions: str, workspace: str, as_json: bool, **options: Any
    ) -> None:
        ws = workspace_for_command(workspace)
        try:
            labelled = load_questions(Path(questions))
        except QuestionFileError as exc:
            raise CommandError(str(exc), returncode=2) from exc
        try:
            comparison = compare_rankings(workspace=ws, questions=labelled)
        except DomainError as exc:
            raise CommandError(exc.message, returncode=1) from exc
        for warning in comparison.warnings:
            self.stderr.write(f"warning: {warning}")
        if as_json:
            self.stdout.write(json.dumps(comparison.as_dict()))
            return
        self._table(comparison)

    def _table(self, comparison: Comparison) -> None:
        write = self.stdout.write
        write(
            f"{len(comparison.questions)} question(s) on workspace {comparison.workspace}: "
            f"documents ranked by their best chunk ({MAX_LIMIT} chunks read), "
            f"first {CUTOFF} scored"
        )
        write(f"{'ranking':<24} {'hit@1':>7} {'hit@5':>7} {'MRR@10':>7} {'nDCG@10':>8}")
        for ranking, scores in comparison.rankings:
            write(
                f"{ranking.label:<24} {scores.hit_at_1:>7.3f} {scores.hit_at_5:>7.3f} "
                f"{scores.mrr_at_10:>7.3f} {scores.ndcg_at_10:>8.3f}"
            )
        self._margins(comparison)

    def _margins(self, comparison: Comparison) -> None:
        if comparison.baseline is None:
            return
        write = self.stdout.write
        write(
            f"against {comparison.baseline.label} (best single signal), reciprocal rank per "
            f"question: mean difference, paired bootstrap {CONFIDENCE:.0%} CI "
            f"({BOOTSTRAP_RESAMPLES} resamples), wins/ties/losses"
        )
        write(f"{'ranking':<24} {'MRR diff':>8} {'CI low':>7} {'CI high':>7} {'w/t/l':>9} clear")
        for ranking, d in comparison.margins:
            counts = f"{d.wins}/{d.ties}/{d.losses}"
            write(
                f"{ranking.label:<24} {d.mean:>+8.3f} {d.ci_low:>+7.3f} {d.ci_high:>+7.3f} "
                f"{counts:>9} {'yes' if d.clear else 'no'}"
            )
