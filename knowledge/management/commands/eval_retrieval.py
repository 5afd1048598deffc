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

A multi-hop question, whose answer needs several documents (two pages joined by a shared
subject), lists them in "requires" (each entry matched like an answer; "answers" may then
be left out):

    {"question": "what grows on the cliffs of the firm Velmora relies on?",
     "requires": ["velmora-suppliers.html", "snippet:grows blue lichen"]}

Any required document is relevant for hit@k, MRR and nDCG; full-support recall@10 is 1 when
every required one is among the first 10 documents, partial support the share of them
there. With multi-hop questions in the file, the table adds both (over the multi-hop
questions), a mixed file's single-page and multi-hop questions are also scored apart (with
MRR margins against each kind's best single signal: `margins_by_kind` in --json), and
every ranking is compared with hybrid (the fusion without the graph) on full support per
multi-hop question, by the same paired bootstrap.

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

from knowledge.retrieval.comparison import Comparison, Ranking, compare_rankings
from knowledge.retrieval.evaluation import (
    BOOTSTRAP_RESAMPLES,
    CONFIDENCE,
    CUTOFF,
    MULTI_HOP,
    SINGLE_PAGE,
    PairedDifference,
    QuestionFileError,
    Scores,
    Support,
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
document (case and whitespace ignored). A multi-hop question lists every document its
answer needs in "requires" (entries as answers): full-support recall@10 (all of them in the
first 10) and partial support are reported beside, with a paired bootstrap of full support
against hybrid without the graph."""

KIND_NAMES = {SINGLE_PAGE: "single-page", MULTI_HOP: "multi-hop"}


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
        """The figures over every question (with support over the multi-hop ones, if
        any), the MRR margins; then, for a mixed file, each kind apart; then the margins
        of full support on the multi-hop questions."""
        write = self.stdout.write
        multi_hop = comparison.count(MULTI_HOP)
        kinds = (
            f" ({comparison.count(SINGLE_PAGE)} single-page, {multi_hop} multi-hop)"
            if multi_hop
            else ""
        )
        write(
            f"{len(comparison.questions)} question(s){kinds} on workspace "
            f"{comparison.workspace}: documents ranked by their best chunk ({MAX_LIMIT} "
            f"chunks read), first {CUTOFF} scored"
        )
        rows = [
            (ranking, scores, comparison.support(ranking))
            for ranking, scores in comparison.rankings
        ]
        self._figures(rows, with_support=bool(multi_hop))
        self._margins(comparison)
        if len(comparison.by_kind) > 1:
            for kind, figures in comparison.by_kind.items():
                write(f"{comparison.count(kind)} {KIND_NAMES[kind]} question(s) alone")
                self._figures(
                    [(r, f.scores, f.support) for r, f in figures],
                    with_support=kind == MULTI_HOP,
                )
                self._kind_margins(comparison, kind)
        self._support_margins(comparison)

    def _figures(
        self, rows: list[tuple[Ranking, Scores, Support | None]], *, with_support: bool
    ) -> None:
        write = self.stdout.write
        header = f"{'ranking':<24} {'hit@1':>7} {'hit@5':>7} {'MRR@10':>7} {'nDCG@10':>8}"
        write(header + (f" {'full@10':>8} {'part@10':>8}" if with_support else ""))
        for ranking, scores, support in rows:
            line = (
                f"{ranking.label:<24} {scores.hit_at_1:>7.3f} {scores.hit_at_5:>7.3f} "
                f"{scores.mrr_at_10:>7.3f} {scores.ndcg_at_10:>8.3f}"
            )
            if with_support and support is not None:
                line += f" {support.full_at_10:>8.3f} {support.partial_at_10:>8.3f}"
            write(line)

    def _margins(self, comparison: Comparison) -> None:
        if comparison.baseline is None:
            return
        self.stdout.write(
            f"against {comparison.baseline.label} (best single signal), reciprocal rank per "
            f"question: mean difference, paired bootstrap {CONFIDENCE:.0%} CI "
            f"({BOOTSTRAP_RESAMPLES} resamples), wins/ties/losses"
        )
        self._differences(comparison.margins, "MRR diff")

    def _kind_margins(self, comparison: Comparison, kind: str) -> None:
        baseline = comparison.kind_baseline(kind)
        if baseline is None:
            return
        self.stdout.write(
            f"against {baseline.label} (best single signal on these), reciprocal rank per "
            f"question: mean difference, paired bootstrap {CONFIDENCE:.0%} CI, wins/ties/losses"
        )
        self._differences(comparison.margins_by_kind[kind], "MRR diff")

    def _support_margins(self, comparison: Comparison) -> None:
        if comparison.support_baseline is None:
            return
        self.stdout.write(
            f"against {comparison.support_baseline.label} (fusion without the graph), full "
            f"support per multi-hop question: mean difference, paired bootstrap "
            f"{CONFIDENCE:.0%} CI ({BOOTSTRAP_RESAMPLES} resamples), wins/ties/losses"
        )
        self._differences(comparison.support_margins, "full diff")

    def _differences(self, margins: list[tuple[Ranking, PairedDifference]], figure: str) -> None:
        write = self.stdout.write
        width = max(8, len(figure))
        write(f"{'ranking':<24} {figure:>{width}} {'CI low':>7} {'CI high':>7} {'w/t/l':>9} clear")
        for ranking, d in margins:
            counts = f"{d.wins}/{d.ties}/{d.losses}"
            write(
                f"{ranking.label:<24} {d.mean:>+{width}.3f} {d.ci_low:>+7.3f} "
                f"{d.ci_high:>+7.3f} {counts:>9} {'yes' if d.clear else 'no'}"
            )
