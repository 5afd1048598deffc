"""Reciprocal rank fusion: the signals' rankings made one.

Scores of different signals (cosine similarity, ts_rank_cd, graph proximity) are not
comparable, their ranks are: each hit scores weight / (RETRIEVAL_RRF_K + rank) per signal,
with the per-signal weights RETRIEVAL_VECTOR_WEIGHT / _KEYWORD_WEIGHT / _GRAPH_WEIGHT.

The graph may only help the first results, never push them down on weak evidence: a rank
fusion counts the graph's rank 1 alike whether it comes from a name the question spells
out or from a neighbour of a loosely matched common word, and on a manual nobody tuned on
that was enough to move the right page from first to second or fifth. So the first
GRAPH_GUARDED_HEAD chunks of the fusion without the graph keep their order against every
chunk the graph does not strongly support (one that mentions an entity the question names
whole, and specific: knowledge/retrieval/signals/expansion.py): such a chunk is placed
below them even when its fused score is higher. Below the head, and for chunks the graph
does support strongly, the fused score decides as before.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection

from django.conf import settings

from knowledge.retrieval.types import ChunkSignals, Recognised, SignalHit

# The first chunks of the ranking without the graph that only strong graph evidence may
# move down. One: the first answer, where hit@1 and most of MRR are decided; below it a
# chunk only the graph relates to the question (a neighbour of the named entity, the
# second page of a two-page answer) may still come up, which is what the graph is for.
GRAPH_GUARDED_HEAD = 1

Fused = list[tuple[int, float, ChunkSignals]]


def _rrf(weight: float, rank: int) -> float:
    return weight / (settings.RETRIEVAL_RRF_K + rank)


def fuse_chunks(
    vector: list[tuple[int, float]],
    keyword: list[tuple[int, float]],
    graph: list[tuple[int, float]],
    *,
    strong: Collection[int] = (),
    guarded: int = GRAPH_GUARDED_HEAD,
) -> Fused:
    """Weighted reciprocal rank fusion: score = sum over signals of weight / (k + rank);
    then the first `guarded` chunks without the graph moved below only by `strong` graph
    hits (see the module docstring)."""
    signals: dict[int, ChunkSignals] = defaultdict(ChunkSignals)
    fused: dict[int, float] = defaultdict(float)
    base: dict[int, float] = defaultdict(float)
    for name, hits, weight in (
        ("vector", vector, settings.RETRIEVAL_VECTOR_WEIGHT),
        ("keyword", keyword, settings.RETRIEVAL_KEYWORD_WEIGHT),
        ("graph", graph, settings.RETRIEVAL_GRAPH_WEIGHT),
    ):
        for rank, (pk, score) in enumerate(hits, start=1):
            setattr(signals[pk], name, SignalHit(rank=rank, score=score))
            fused[pk] += _rrf(weight, rank)
            if name != "graph":
                base[pk] += _rrf(weight, rank)
    ordered = [
        (pk, round(score, 6), signals[pk])
        for pk, score in sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
        if score > 0
    ]
    if not graph or guarded <= 0:
        return ordered
    head = [pk for pk, s in sorted(base.items(), key=lambda kv: (-kv[1], kv[0])) if s > 0]
    return guard_head(ordered, head[:guarded], frozenset(strong))


def guard_head(ordered: Fused, head: list[int], strong: frozenset[int]) -> Fused:
    """`ordered` with each chunk of `head` (the first chunks without the graph, best first)
    above every chunk it was above without the graph, unless that chunk is `strong`. A
    chunk held back takes its place right after the last head chunk it waited for, in its
    fused order; scores are lowered where needed so that they stay in order."""
    rank = {pk: n for n, pk in enumerate(head)}
    beyond = len(head)
    placed: set[int] = set()

    def free(pk: int) -> bool:
        if pk in strong:
            return True
        return all(h in placed for h in head[: rank.get(pk, beyond)])

    out: Fused = []
    waiting: Fused = []

    def place(item: tuple[int, float, ChunkSignals]) -> None:
        pk, score, hit = item
        if out:
            score = min(score, out[-1][1])
        out.append((pk, score, hit))
        placed.add(pk)

    for item in ordered:
        if not free(item[0]):
            waiting.append(item)
            continue
        place(item)
        while released := [w for w in waiting if free(w[0])]:
            waiting = [w for w in waiting if not free(w[0])]
            for w in released:
                place(w)
    for w in waiting:  # a head chunk missing from `ordered` holds nothing back for good
        place(w)
    return out


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
