"""Reciprocal rank fusion: the signals' rankings made one.

Scores of different signals (cosine similarity, ts_rank_cd, graph proximity) are not
comparable, their ranks are: each hit scores weight / (RETRIEVAL_RRF_K + rank) per signal,
with the per-signal weights RETRIEVAL_VECTOR_WEIGHT / _KEYWORD_WEIGHT / _GRAPH_WEIGHT.
"""

from __future__ import annotations

from collections import defaultdict

from django.conf import settings

from knowledge.retrieval.types import ChunkSignals, Recognised, SignalHit


def _rrf(weight: float, rank: int) -> float:
    return weight / (settings.RETRIEVAL_RRF_K + rank)


def fuse_chunks(
    vector: list[tuple[int, float]],
    keyword: list[tuple[int, float]],
    graph: list[tuple[int, float]],
) -> list[tuple[int, float, ChunkSignals]]:
    """Weighted reciprocal rank fusion: score = sum over signals of weight / (k + rank)."""
    signals: dict[int, ChunkSignals] = defaultdict(ChunkSignals)
    fused: dict[int, float] = defaultdict(float)
    for name, hits, weight in (
        ("vector", vector, settings.RETRIEVAL_VECTOR_WEIGHT),
        ("keyword", keyword, settings.RETRIEVAL_KEYWORD_WEIGHT),
        ("graph", graph, settings.RETRIEVAL_GRAPH_WEIGHT),
    ):
        for rank, (pk, score) in enumerate(hits, start=1):
            setattr(signals[pk], name, SignalHit(rank=rank, score=score))
            fused[pk] += _rrf(weight, rank)
    ordered = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(pk, round(score, 6), signals[pk]) for pk, score in ordered if score > 0]


def fuse_entities(
    recognised: list[Recognised],
    vector: list[tuple[int, float]],
    proximity: dict[int, tuple[float, int]],
) -> list[tuple[int, float]]:
    """Entities by the same fusion: recognition (query order, weight 1), name vectors and
    graph proximity (their retrieval weights)."""
    fused: dict[int, float] = defaultdict(float)
    for rank, pk in enumerate(unique([r.entity_id for r in recognised]), start=1):
        fused[pk] += _rrf(1.0, rank)
    for rank, (pk, _) in enumerate(vector, start=1):
        fused[pk] += _rrf(settings.RETRIEVAL_VECTOR_WEIGHT, rank)
    by_proximity = sorted(proximity.items(), key=lambda kv: (-kv[1][0], kv[0]))
    for rank, (pk, _) in enumerate(by_proximity, start=1):
        fused[pk] += _rrf(settings.RETRIEVAL_GRAPH_WEIGHT, rank)
    ordered = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(pk, round(score, 6)) for pk, score in ordered if score > 0]


def unique(ids: list[int]) -> list[int]:
    """The ids in their first order, each once."""
    return list(dict.fromkeys(ids))
