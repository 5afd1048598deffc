"""The retrieval quality comparison: labelled questions (knowledge/retrieval/evaluation.py)
answered by five rankings in one run over one workspace, each scored the same way.

The rankings are `hybrid_search` itself with fewer chunk signals, never a second
implementation of a query: `vector` (the vector signal only), `keyword` (full-text only),
`hybrid` (vector + keyword, no graph: hops 0 and no graph signal) and `hybrid+graph` with
hops 1 and hops 2 (every signal, the fusion as configured by RETRIEVAL_*). Each question is
embedded once and every ranking gets the same vector; searches here record no access.

A ranking is read MAX_LIMIT chunks deep, so that after several chunks of one document
count once there are still CUTOFF documents to score.

Every other ranking is then compared, question by question, with the best single signal
(the one-signal ranking of the highest MRR@10): the paired difference of reciprocal ranks
with its bootstrap confidence interval (evaluation.paired_difference). Whether the fusion
beats what one signal does alone by a clear margin is that interval's lower bound.

Multi-hop questions (a `requires` list: several documents all needed) are scored like the
others, and also by full- and partial-support recall@10; their figures, and the single-page
questions', are also given apart (`by_kind`, and the MRR margins of each kind against its
own best single signal, `margins_by_kind`), so a mixed file says how each kind fares.
On them every ranking is compared with the fusion without the graph (`hybrid`), question
by question, on full support (0 or 1): whether following the graph brings the second page
of the answer is what the graph is for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from knowledge.retrieval.evaluation import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    CONFIDENCE,
    CUTOFF,
    MULTI_HOP,
    SINGLE_PAGE,
    PairedDifference,
    Question,
    Scores,
    Support,
    documents_in_order,
    first_relevant_rank,
    full_support,
    mean_scores,
    mean_support,
    paired_difference,
    reciprocal_rank_of,
    requirements_met,
    score_ranking,
    score_support,
)
from knowledge.retrieval.limits import MAX_LIMIT
from knowledge.retrieval.query_embedding import embed_query
from knowledge.retrieval.search import hybrid_search
from knowledge.retrieval.types import QueryVector
from workspaces.models import Workspace


@dataclass(frozen=True, slots=True)
class Ranking:
    name: str
    signals: tuple[str, ...]
    hops: int

    @property
    def label(self) -> str:
        return f"{self.name} (hops {self.hops})" if "graph" in self.signals else self.name


RANKINGS = (
    Ranking("vector", ("vector",), 0),
    Ranking("keyword", ("keyword",), 0),
    Ranking("hybrid", ("vector", "keyword"), 0),
    Ranking("hybrid+graph", ("vector", "keyword", "graph"), 1),
    Ranking("hybrid+graph", ("vector", "keyword", "graph"), 2),
)


@dataclass(slots=True)
class QuestionResult:
    question: Question
    relevant_documents: int
    # Ranking label -> rank of the first relevant document (None: not in the first CUTOFF).
    ranks: dict[str, int | None] = field(default_factory=dict)
    # Multi-hop only: ranking label -> how many required documents are in the first CUTOFF.
    met: dict[str, int] = field(default_factory=dict)

    def full_support(self, label: str) -> float:
        """1.0 when the ranking `label` brought every required document (0.0 for a
        single-page question)."""
        return full_support(self.met.get(label, 0), len(self.question.requires))

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "line": self.question.line,
            "question": self.question.text,
            "kind": self.question.kind,
            "relevant_documents": self.relevant_documents,
            "first_relevant_rank": self.ranks,
        }
        if self.question.multi_hop:
            out["required_documents"] = len(self.question.requires)
            out["required_found"] = self.met
            out["full_support_recall_at_10"] = {
                label: int(self.full_support(label)) for label in self.met
            }
        return out


@dataclass(frozen=True, slots=True)
class KindFigures:
    """One kind of question's figures for one ranking (support: multi-hop only)."""

    scores: Scores
    support: Support | None = None

    def as_dict(self) -> dict[str, float]:
        return {**self.scores.as_dict(), **(self.support.as_dict() if self.support else {})}


@dataclass(slots=True)
class Comparison:
    workspace: str
    rankings: list[tuple[Ranking, Scores]]
    questions: list[QuestionResult]
    warnings: list[str]
    # The best single signal, and every other ranking's paired difference against it.
    baseline: Ranking | None = None
    margins: list[tuple[Ranking, PairedDifference]] = field(default_factory=list)
    # Question kind (SINGLE_PAGE, MULTI_HOP) -> each ranking's figures on those alone; only
    # the kinds the file has.
    by_kind: dict[str, list[tuple[Ranking, KindFigures]]] = field(default_factory=dict)
    # On the multi-hop questions: the fusion without the graph, and every other ranking's
    # paired difference of full support against it.
    support_baseline: Ranking | None = None
    support_margins: list[tuple[Ranking, PairedDifference]] = field(default_factory=list)
    # Question kind -> the MRR margins on those questions alone, each kind against its own
    # best single signal (the baseline of a margin is every other ranking's `against`).
    margins_by_kind: dict[str, list[tuple[Ranking, PairedDifference]]] = field(default_factory=dict)

    def count(self, kind: str) -> int:
        return sum(1 for r in self.questions if r.question.kind == kind)

    def kind_baseline(self, kind: str) -> Ranking | None:
        """The best single signal on one kind of question alone (None: no single signal,
        or no question of that kind)."""
        rows = self.by_kind.get(kind, [])
        return best_single_signal([(r, f.scores) for r, f in rows])

    def support(self, ranking: Ranking) -> Support | None:
        """The ranking's support on the multi-hop questions (None: there are none)."""
        for scored, figures in self.by_kind.get(MULTI_HOP, []):
            if scored == ranking:
                return figures.support
        return None

    def as_dict(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace,
            "questions": len(self.questions),
            "single_page_questions": self.count(SINGLE_PAGE),
            "multi_hop_questions": self.count(MULTI_HOP),
            "cutoff": CUTOFF,
            "chunks_read": MAX_LIMIT,
            "relevance": "document",
            "rankings": [self._ranking_dict(ranking, scores) for ranking, scores in self.rankings],
            "by_kind": {
                kind: [{"label": ranking.label, **figures.as_dict()} for ranking, figures in rows]
                for kind, rows in self.by_kind.items()
            },
            "per_question": [r.as_dict() for r in self.questions],
            "best_single_signal": self.baseline.label if self.baseline else None,
            "bootstrap": {
                "resamples": BOOTSTRAP_RESAMPLES,
                "seed": BOOTSTRAP_SEED,
                "confidence": CONFIDENCE,
            },
            "margins": _margins_dict(self.margins, self.baseline),
            "margins_by_kind": {
                kind: _margins_dict(margins, self.kind_baseline(kind))
                for kind, margins in self.margins_by_kind.items()
            },
            "full_support_baseline": (
                self.support_baseline.label if self.support_baseline else None
            ),
            "full_support_margins": _margins_dict(self.support_margins, self.support_baseline),
            "warnings": self.warnings,
        }

    def _ranking_dict(self, ranking: Ranking, scores: Scores) -> dict[str, Any]:
        """A ranking's figures over every question, then its support over the multi-hop
        ones (null when the file has none)."""
        support = self.support(ranking)
        return {
            "name": ranking.name,
            "label": ranking.label,
            "signals": list(ranking.signals),
            "hops": ranking.hops,
            **scores.as_dict(),
            "full_support_recall_at_10": round(support.full_at_10, 4) if support else None,
            "partial_support_recall_at_10": round(support.partial_at_10, 4) if support else None,
        }


def _margins_dict(
    margins: Sequence[tuple[Ranking, PairedDifference]], baseline: Ranking | None
) -> list[dict[str, Any]]:
    return [
        {
            "label": ranking.label,
            "against": baseline.label if baseline else None,
            **difference.as_dict(),
        }
        for ranking, difference in margins
    ]


def compare_rankings(
    *,
    workspace: Workspace,
    questions: Sequence[Question],
    rankings: Sequence[Ranking] = RANKINGS,
) -> Comparison:
    """Every question through every ranking; mean figures per ranking (over all questions
    and per kind), first relevant rank (and required documents found) per question, and
    warnings (no embedding model, questions or required entries no document matches)."""
    warnings: list[str] = []
    per_ranking: dict[Ranking, list[Scores]] = {r: [] for r in rankings}
    supports: dict[Ranking, list[Support]] = {r: [] for r in rankings}
    results = []
    unembedded = 0
    for question in questions:
        relevant = relevant_documents(workspace.pk, question)
        required = required_documents(workspace.pk, question)
        warnings.extend(unmatched_warnings(question, relevant, required))
        vector = embed_query(question.text, [])
        unembedded += vector is None
        result = QuestionResult(question=question, relevant_documents=len(relevant))
        for ranking in rankings:
            ranked = ranked_documents(workspace, question.text, ranking, vector)
            per_ranking[ranking].append(score_ranking(ranked, relevant))
            result.ranks[ranking.label] = first_relevant_rank(ranked, relevant)
            if question.multi_hop:
                supports[ranking].append(score_support(ranked, required))
                result.met[ranking.label] = requirements_met(ranked, required)
        results.append(result)
    if unembedded:
        warnings.append(
            f"{unembedded} question(s) could not be embedded (no embedding model): "
            "the vector signal ranked nothing for them"
        )
    comparison = Comparison(
        workspace=workspace.slug,
        rankings=[(r, mean_scores(per_ranking[r])) for r in rankings],
        questions=results,
        warnings=warnings,
        by_kind=figures_by_kind(questions, rankings, per_ranking, supports),
    )
    add_margins(comparison, rankings)
    return comparison


def add_margins(comparison: Comparison, rankings: Sequence[Ranking]) -> None:
    """The paired comparisons: MRR against the best single signal over every question and
    over each kind alone (against that kind's best single signal), and full support on
    the multi-hop questions against the fusion without the graph."""
    comparison.baseline = best_single_signal(comparison.rankings)
    if comparison.baseline is not None:
        comparison.margins = paired_margins(comparison.questions, rankings, comparison.baseline)
    for kind in comparison.by_kind:
        baseline = comparison.kind_baseline(kind)
        if baseline is not None:
            picked = [r for r in comparison.questions if r.question.kind == kind]
            comparison.margins_by_kind[kind] = paired_margins(picked, rankings, baseline)
    multi_hop = [r for r in comparison.questions if r.question.multi_hop]
    support_baseline = fusion_without_graph(rankings)
    if multi_hop and support_baseline is not None:
        comparison.support_baseline = support_baseline
        comparison.support_margins = paired_margins(
            multi_hop, rankings, support_baseline, figure=FULL_SUPPORT
        )


def unmatched_warnings(
    question: Question, relevant: set[int], required: Sequence[set[int]]
) -> list[str]:
    """What the workspace cannot answer: a question no document matches, a required
    entry no document matches (its full support is 0 whatever the ranking)."""
    if not relevant:
        return [
            f"line {question.line}: no document of the workspace matches its answers "
            "(it scores 0 in every ranking)"
        ]
    return [
        f"line {question.line}: no document of the workspace matches required entry "
        f"{needed.entry[:80]!r} (full support is 0 in every ranking)"
        for needed, documents in zip(question.requires, required, strict=True)
        if not documents
    ]


def figures_by_kind(
    questions: Sequence[Question],
    rankings: Sequence[Ranking],
    scores: dict[Ranking, list[Scores]],
    supports: dict[Ranking, list[Support]],
) -> dict[str, list[tuple[Ranking, KindFigures]]]:
    """Each ranking's mean figures over the single-page questions and over the multi-hop
    ones (with their support), for the kinds there are. `scores` is per question in
    `questions`' order; `supports` per multi-hop question."""
    out: dict[str, list[tuple[Ranking, KindFigures]]] = {}
    for kind in (SINGLE_PAGE, MULTI_HOP):
        picked = [n for n, q in enumerate(questions) if q.kind == kind]
        if not picked:
            continue
        out[kind] = [
            (
                ranking,
                KindFigures(
                    mean_scores([scores[ranking][n] for n in picked]),
                    mean_support(supports[ranking]) if kind == MULTI_HOP else None,
                ),
            )
            for ranking in rankings
        ]
    return out


def best_single_signal(scored: Sequence[tuple[Ranking, Scores]]) -> Ranking | None:
    """The one-signal ranking with the highest MRR@10 (the first of equals; None when no
    ranking uses a single signal)."""
    single = [(r, s) for r, s in scored if len(r.signals) == 1]
    if not single:
        return None
    return max(single, key=lambda rs: rs[1].mrr_at_10)[0]


def fusion_without_graph(rankings: Sequence[Ranking]) -> Ranking | None:
    """The ranking fusing the most signals without the graph (`hybrid`; the first of
    equals; None when no ranking fuses several signals without it): what the graph
    rankings add the graph to."""
    fused = [r for r in rankings if "graph" not in r.signals and len(r.signals) > 1]
    return max(fused, key=lambda r: len(r.signals)) if fused else None


PerQuestionFigure = Callable[[QuestionResult, str], float]


def _reciprocal_rank(result: QuestionResult, label: str) -> float:
    return reciprocal_rank_of(result.ranks.get(label))


def _full_support(result: QuestionResult, label: str) -> float:
    return result.full_support(label)


RECIPROCAL_RANK: PerQuestionFigure = _reciprocal_rank
FULL_SUPPORT: PerQuestionFigure = _full_support


def paired_margins(
    results: Sequence[QuestionResult],
    rankings: Sequence[Ranking],
    baseline: Ranking,
    *,
    figure: PerQuestionFigure = RECIPROCAL_RANK,
) -> list[tuple[Ranking, PairedDifference]]:
    """Every ranking but the baseline against it, on these questions' `figure` (reciprocal
    ranks; FULL_SUPPORT on multi-hop questions) — any subset of a comparison's questions:
    the benchmark reports halves of its set."""
    base = [figure(r, baseline.label) for r in results]
    return [
        (ranking, paired_difference([figure(r, ranking.label) for r in results], base))
        for ranking in rankings
        if ranking != baseline
    ]


def ranked_documents(
    workspace: Workspace, text: str, ranking: Ranking, vector: QueryVector | None
) -> list[int]:
    """The documents of one ranking's chunks, best first, each once."""
    result = hybrid_search(
        workspace=workspace,
        query=text,
        limit=MAX_LIMIT,
        hops=ranking.hops,
        signals=ranking.signals,
        record_access=False,
        query_vector=vector,
    )
    return documents_in_order(c.document_id for c in result.chunks)


def relevant_documents(workspace_id: int, question: Question) -> set[int]:
    """The documents any answer of the question matches (or any required entry of a
    multi-hop question): URL or path containing a locator, or a chunk that could be a
    search hit (not boilerplate) containing a snippet, compared as evaluation.normalise
    does. A duplicate document stands for its original, which holds the chunks."""
    found = matching_documents(workspace_id, question.locators, question.snippets)
    for documents in required_documents(workspace_id, question):
        found |= documents
    return found


def required_documents(workspace_id: int, question: Question) -> list[set[int]]:
    """Per required entry of a multi-hop question, the documents it matches (as an answer
    would); empty for a single-page question."""
    return [
        matching_documents(workspace_id, needed.locators, needed.snippets)
        for needed in question.requires
    ]


def matching_documents(
    workspace_id: int, locators: Sequence[str], snippets: Sequence[str]
) -> set[int]:
    """The documents whose URL or path contains one of `locators` (lower-cased), or with a
    chunk (not boilerplate) containing one of `snippets` (normalised)."""
    found: set[int] = set()
    with connection.cursor() as cursor:
        for locator in locators:
            cursor.execute(
                "SELECT DISTINCT coalesce(duplicate_of_id, id) FROM ingest_document "
                "WHERE workspace_id = %s AND strpos(lower(path), %s) > 0",
                [workspace_id, locator],
            )
            found.update(int(row[0]) for row in cursor.fetchall())
        for snippet in snippets:
            cursor.execute(
                "SELECT DISTINCT document_id FROM ingest_chunk "
                "WHERE workspace_id = %s AND NOT boilerplate AND "
                r"strpos(btrim(regexp_replace(lower(text), '\s+', ' ', 'g')), %s) > 0",
                [workspace_id, snippet],
            )
            found.update(int(row[0]) for row in cursor.fetchall())
    return found
