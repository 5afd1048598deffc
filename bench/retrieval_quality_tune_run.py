"""The fusion tuning itself; run it through bench/retrieval_quality_tune.py (see there)."""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection

from bench.retrieval_quality_run import QUESTIONS, SLUG
from knowledge.retrieval import rerank as rerank_module
from knowledge.retrieval import search as search_module
from knowledge.retrieval.comparison import relevant_documents
from knowledge.retrieval.evaluation import (
    CUTOFF,
    PairedDifference,
    Question,
    documents_in_order,
    first_relevant_rank,
    load_questions,
    paired_difference,
    reciprocal_rank_of,
)
from knowledge.retrieval.fusion import fuse_chunks
from knowledge.retrieval.limits import MAX_LIMIT
from knowledge.retrieval.query_embedding import embed_query
from knowledge.retrieval.rerank import Coverage, RerankSettings, rerank
from knowledge.retrieval.types import ChunkSignals, Recognised
from workspaces.models import Workspace

Ranked = list[tuple[int, float]]


@dataclass(slots=True)
class Captured:
    """What fusion received for one question at one hops setting."""

    vector: Ranked = field(default_factory=list)
    keyword: Ranked = field(default_factory=list)
    graph: Ranked = field(default_factory=list)
    recognised: list[Recognised] = field(default_factory=list)
    specificity: dict[int, float] = field(default_factory=dict)
    coverage: Coverage | None = None


@dataclass(slots=True)
class Case:
    question: Question
    relevant: set[int]
    document_of: dict[int, int]
    by_hops: dict[int, Captured]


@dataclass(frozen=True, slots=True)
class Config:
    hops: int
    graph_weight: float
    vector_cap: int = MAX_LIMIT
    keyword_cap: int = MAX_LIMIT
    graph_cap: int = MAX_LIMIT
    graph_only_cap: int | None = None  # graph-only chunks allowed in the first CUTOFF
    depth: int = 0
    mention_weight: float = 0.0
    title_weight: float = 0.0
    rrf_k: int = 10
    keyword_weight: float = 0.5
    min_specificity: float = 0.0  # recognised entities below it left out of the mentions share


@contextmanager
def capturing(into: Captured) -> Iterator[None]:
    """The search's fusion inputs and rerank arguments recorded while it runs."""
    real_fuse, real_coverage = search_module.fuse_chunks, search_module.coverage_of

    def fuse(vector: Ranked, keyword: Ranked, graph: Ranked) -> Any:
        into.vector, into.keyword, into.graph = list(vector), list(keyword), list(graph)
        return real_fuse(vector, keyword, graph)

    def coverage(
        workspace_id: int, ids: list[int], recognised: list[Recognised], spec: dict[int, float]
    ) -> Coverage:
        into.recognised, into.specificity = list(recognised), dict(spec)
        return real_coverage(workspace_id, ids, recognised, spec)

    search_module.fuse_chunks, search_module.coverage_of = fuse, coverage  # type: ignore[assignment]
    try:
        yield
    finally:
        search_module.fuse_chunks, search_module.coverage_of = real_fuse, real_coverage


def capture(workspace: Workspace, questions: list[Question]) -> list[Case]:
    settings.RETRIEVAL_RERANK_DEPTH = MAX_LIMIT  # so that the rerank stage runs and is seen
    settings.RETRIEVAL_RERANK_MENTION_WEIGHT = 1.0
    cases = []
    for question in questions:
        vector = embed_query(question.text, [])
        by_hops = {}
        for hops in (1, 2):
            captured = Captured()
            with capturing(captured):
                search_module.hybrid_search(
                    workspace=workspace, query=question.text, limit=MAX_LIMIT, hops=hops,
                    record_access=False, query_vector=vector,
                )  # fmt: skip
            by_hops[hops] = captured
        ids = sorted({pk for c in by_hops.values() for pk, _ in c.vector + c.keyword + c.graph})
        for captured in by_hops.values():
            captured.coverage = rerank_module.coverage_of(
                workspace.pk, ids, captured.recognised, captured.specificity
            )
        cases.append(
            Case(question, relevant_documents(workspace.pk, question), documents(ids), by_hops)
        )
    return cases


def documents(chunk_ids: list[int]) -> dict[int, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, document_id FROM ingest_chunk WHERE id = ANY(%s)", [chunk_ids])
        return {int(a): int(b) for a, b in cursor.fetchall()}


def rank_of(case: Case, chunk_ids: list[int]) -> int | None:
    ranked = documents_in_order(case.document_of[pk] for pk in chunk_ids)
    return first_relevant_rank(ranked, case.relevant)


def cap_graph_only(fused: list[tuple[int, float, ChunkSignals]], cap: int) -> list[int]:
    """At most `cap` chunks only the graph found among the first CUTOFF; the others after."""
    head: list[int] = []
    later: list[int] = []
    graph_only = 0
    for pk, _, signals in fused:
        only = signals.vector is None and signals.keyword is None
        if len(head) < CUTOFF and only and graph_only >= cap:
            later.append(pk)
            continue
        graph_only += only and len(head) < CUTOFF
        (head if len(head) < CUTOFF else later).append(pk)
    return head + later


def fused_rank(case: Case, config: Config) -> int | None:
    c = case.by_hops[config.hops]
    settings.RETRIEVAL_GRAPH_WEIGHT = config.graph_weight
    settings.RETRIEVAL_RRF_K = config.rrf_k
    settings.RETRIEVAL_KEYWORD_WEIGHT = config.keyword_weight
    fused = fuse_chunks(
        c.vector[: config.vector_cap], c.keyword[: config.keyword_cap], c.graph[: config.graph_cap]
    )
    if c.coverage is not None and c.recognised:
        coverage = c.coverage
        if config.min_specificity:
            weights = {
                e: w if w >= config.min_specificity else 0.0 for e, w in coverage.weights.items()
            }
            coverage = Coverage(weights, coverage.mentions, coverage.titled)
        fused = rerank(
            fused,
            coverage,
            RerankSettings(config.depth, config.mention_weight, config.title_weight),
        )
    if config.graph_only_cap is not None:
        return rank_of(case, cap_graph_only(fused, config.graph_only_cap))
    return rank_of(case, [pk for pk, _, _ in fused])


def baselines(case: Case) -> dict[str, int | None]:
    c = case.by_hops[1]
    settings.RETRIEVAL_GRAPH_WEIGHT = 0.5
    settings.RETRIEVAL_RRF_K = 10
    settings.RETRIEVAL_KEYWORD_WEIGHT = 0.5
    return {
        "vector": rank_of(case, [pk for pk, _ in c.vector]),
        "keyword": rank_of(case, [pk for pk, _ in c.keyword]),
        "hybrid": rank_of(case, [pk for pk, _, _ in fuse_chunks(c.vector, c.keyword, [])]),
    }


def summary(ranks: list[int | None], base: list[int | None], lines: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for half, keep in (("odd", 1), ("even", 0), ("all", None)):
        idx = [i for i, line in enumerate(lines) if keep is None or line % 2 == keep]
        mine = [reciprocal_rank_of(ranks[i]) for i in idx]
        theirs = [reciprocal_rank_of(base[i]) for i in idx]
        difference: PairedDifference = paired_difference(mine, theirs)
        out[half] = {"mrr": round(sum(mine) / len(mine), 4), **difference.as_dict()}
    return out


def fusion_grid() -> Iterator[Config]:
    """The fusion's own weights, with and without the graph (graph weight 0)."""
    for hops, k, keyword, weight, cap in itertools.product(
        (1, 2), (5, 10, 20), (0.3, 0.4, 0.5, 0.6), (0.0, 0.3, 0.4, 0.5, 0.6), (10, 20, 50)
    ):
        yield Config(hops, weight, graph_cap=cap, rrf_k=k, keyword_weight=keyword)


def specific_rerank_grid() -> Iterator[Config]:
    """Reranking by the mentions of the question's more specific entities only."""
    for hops, depth, mention, floor in itertools.product(
        (1, 2), (5, 10, 20), (0.05, 0.1, 0.2, 0.3), (0.5, 0.6, 0.7, 0.8, 0.9)
    ):
        yield Config(hops, 0.5, depth=depth, mention_weight=mention, min_specificity=floor)


def grid() -> Iterator[Config]:
    yield from fusion_grid()
    yield from specific_rerank_grid()
    yield from first_grid()


def first_grid() -> Iterator[Config]:
    for hops, weight in itertools.product((1, 2), (0.3, 0.5, 0.75)):
        yield Config(hops, weight)
        for cap in (10, 20):
            yield Config(hops, weight, graph_cap=cap)
            yield Config(hops, weight, keyword_cap=cap)
            yield Config(hops, weight, vector_cap=cap)
        for cap in (0, 1, 2, 3):
            yield Config(hops, weight, graph_only_cap=cap)
        for depth, mention, title in itertools.product(
            (10, 20, 30, 50), (0.0, 0.05, 0.1, 0.2, 0.3, 0.5), (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
        ):
            if mention or title:
                yield Config(hops, weight, depth=depth, mention_weight=mention, title_weight=title)


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench/retrieval_quality_tune.py")
    parser.add_argument("--questions", default=str(QUESTIONS))
    parser.add_argument("--out")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    workspace = Workspace.objects.get(slug=SLUG)
    questions = load_questions(Path(args.questions))
    cases = capture(workspace, questions)
    lines = [c.question.line for c in cases]
    base = [baselines(c) for c in cases]
    vector = [b["vector"] for b in base]
    results = []
    for name in ("keyword", "hybrid"):
        results.append({"config": name, **summary([b[name] for b in base], vector, lines)})
    for config in grid():
        ranks = [fused_rank(c, config) for c in cases]
        results.append({"config": asdict(config), **summary(ranks, vector, lines)})
    by_odd = sorted(results[2:], key=lambda r: (-r["odd"]["mean_difference"], -r["odd"]["ci_low"]))
    print(f"{len(results)} configurations; vector MRR@10 odd/even/all: "
          + " / ".join(str(results[1][h]["mrr"] - results[1][h]["mean_difference"])
                       for h in ("odd", "even", "all")))  # fmt: skip
    for r in results[:2] + by_odd[: args.top]:
        print(json.dumps(r))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
