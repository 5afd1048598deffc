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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from knowledge.retrieval.evaluation import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    CONFIDENCE,
    CUTOFF,
    PairedDifference,
    Question,
    Scores,
    documents_in_order,
    first_relevant_rank,
    mean_scores,
    paired_difference,
    reciprocal_rank_of,
    score_ranking,
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


@dataclass(slots=True)
class Comparison:
    workspace: str
    rankings: list[tuple[Ranking, Scores]]
    questions: list[QuestionResult]
    warnings: list[str]
    # The best single signal, and every other ranking's paired difference against it.
    baseline: Ranking | None = None
    margins: list[tuple[Ranking, PairedDifference]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace,
            "questions": len(self.questions),
            "cutoff": CUTOFF,
            "chunks_read": MAX_LIMIT,
            "relevance": "document",
            "rankings": [
                {
                    "name": ranking.name,
                    "label": ranking.label,
                    "signals": list(ranking.signals),
                    "hops": ranking.hops,
                    **scores.as_dict(),
                }
                for ranking, scores in self.rankings
            ],
            "per_question": [
                {
                    "line": r.question.line,
                    "question": r.question.text,
                    "relevant_documents": r.relevant_documents,
                    "first_relevant_rank": r.ranks,
                }
                for r in self.questions
            ],
            "best_single_signal": self.baseline.label if self.baseline else None,
            "bootstrap": {
                "resamples": BOOTSTRAP_RESAMPLES,
                "seed": BOOTSTRAP_SEED,
                "confidence": CONFIDENCE,
            },
            "margins": [
                {
                    "label": ranking.label,
                    "against": self.baseline.label if self.baseline else None,
                    **difference.as_dict(),
                }
                for ranking, difference in self.margins
            ],
            "warnings": self.warnings,
        }


def compare_rankings(
    *,
    workspace: Workspace,
    questions: Sequence[Question],
    rankings: Sequence[Ranking] = RANKINGS,
) -> Comparison:
    """Every question through every ranking; mean figures per ranking, first relevant rank
    per question, and warnings (no embedding model, questions no document answers)."""
    warnings: list[str] = []
    per_ranking: dict[Ranking, list[Scores]] = {r: [] for r in rankings}
    results = []
    unembedded = 0
    for question in questions:
        relevant = relevant_documents(workspace.pk, question)
        if not relevant:
            warnings.append(
                f"line {question.line}: no document of the workspace matches its answers "
                "(it scores 0 in every ranking)"
            )
        vector = embed_query(question.text, [])
        unembedded += vector is None
        result = QuestionResult(question=question, relevant_documents=len(relevant))
        for ranking in rankings:
            ranked = ranked_documents(workspace, question.text, ranking, vector)
            per_ranking[ranking].append(score_ranking(ranked, relevant))
            result.ranks[ranking.label] = first_relevant_rank(ranked, relevant)
        results.append(result)
    if unembedded:
        warnings.append(
            f"{unembedded} question(s) could not be embedded (no embedding model): "
            "the vector signal ranked nothing for them"
        )
    scored = [(r, mean_scores(per_ranking[r])) for r in rankings]
    baseline = best_single_signal(scored)
    return Comparison(
        workspace=workspace.slug,
        rankings=scored,
        questions=results,
        warnings=warnings,
        baseline=baseline,
        margins=[] if baseline is None else paired_margins(results, rankings, baseline),
    )


def best_single_signal(scored: Sequence[tuple[Ranking, Scores]]) -> Ranking | None:
    """The one-signal ranking with the highest MRR@10 (the first of equals; None when no
    ranking uses a single signal)."""
    single = [(r, s) for r, s in scored if len(r.signals) == 1]
    if not single:
        return None
    return max(single, key=lambda rs: rs[1].mrr_at_10)[0]


def paired_margins(
    results: Sequence[QuestionResult], rankings: Sequence[Ranking], baseline: Ranking
) -> list[tuple[Ranking, PairedDifference]]:
    """Every ranking but the baseline against it, on these questions' reciprocal ranks
    (any subset of a comparison's questions: the benchmark reports halves of its set)."""
    base = [reciprocal_rank_of(r.ranks.get(baseline.label)) for r in results]
    return [
        (
            ranking,
            paired_difference(
                [reciprocal_rank_of(r.ranks.get(ranking.label)) for r in results], base
            ),
        )
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
    """The documents any answer of the question matches: URL or path containing a locator,
    or a chunk that could be a search hit (not boilerplate) containing a snippet, compared
    as evaluation.normalise does. A duplicate document stands for its original, which
    holds the chunks."""
    found: set[int] = set()
    with connection.cursor() as cursor:
        for locator in question.locators:
            cursor.execute(
                "SELECT DISTINCT coalesce(duplicate_of_id, id) FROM ingest_document "
                "WHERE workspace_id = %s AND strpos(lower(path), %s) > 0",
                [workspace_id, locator],
            )
            found.update(int(row[0]) for row in cursor.fetchall())
        for snippet in question.snippets:
            cursor.execute(
                "SELECT DISTINCT document_id FROM ingest_chunk "
                "WHERE workspace_id = %s AND NOT boilerplate AND "
                r"strpos(btrim(regexp_replace(lower(text), '\s+', ' ', 'g')), %s) > 0",
                [workspace_id, snippet],
            )
            found.update(int(row[0]) for row in cursor.fetchall())
    return found
