"""Graph evidence may only help: the first result of the other signals keeps its place
against chunks the graph does not strongly support (a neighbour of the named entity, a
chunk only the graph relates to the question), while a chunk that mentions the entity the
question names may still come first."""

from __future__ import annotations

import pytest

from knowledge.retrieval import hybrid_search
from knowledge.retrieval.fusion import fuse_chunks
from tests.knowledge.conftest import World
from tests.knowledge.retrieval.test_retrieval import DISTRACTORS, MOSS

# Answers the question without naming Zorblax: the first result of vectors and words.
ANSWER = "Engines for cargo ships: the company builds diesel engines for cargo ships of every size."
# Names Zorblax (the entity the question names) and relates it to Quentaris, whom MOSS is
# about.
LINK = "Zorblax depends on Quentaris."


@pytest.fixture
def world(llm) -> World:
    responder = World()
    llm.responder = responder
    return responder


def order(fused) -> list[int]:
    return [pk for pk, _, _ in fused]


def test_a_weakly_supported_graph_hit_stays_below_the_first_result_of_the_other_signals(
    settings,
):
    settings.RETRIEVAL_GRAPH_WEIGHT = 1.0
    vector = [(1, 0.9), (2, 0.8), (3, 0.7)]
    keyword = [(1, 2.0)]
    graph = [(3, 0.3), (2, 0.2)]

    fused = fuse_chunks(vector, keyword, graph)
    assert order(fused) == [1, 3, 2]  # 3 outscores 1, and waits for it
    scores = [score for _, score, _ in fused]
    assert scores == sorted(scores, reverse=True)
    assert order(fuse_chunks(vector, keyword, graph, guarded=0)) == [3, 2, 1]
    # Strong evidence (chunk 3 mentions the entity the question names) may pass it.
    assert order(fuse_chunks(vector, keyword, graph, strong={3})) == [3, 1, 2]
    # Without the graph nothing is reordered.
    assert order(fuse_chunks(vector, keyword, [])) == [1, 2, 3]


def test_a_chunk_only_the_graph_relates_cannot_push_the_top_answer_down(
    alice, world, ingest_text, settings
):
    world.entities.update({"Zorblax": "organization", "Quentaris": "organization"})
    world.relations.append(("Zorblax", "Quentaris", "related_to"))
    ingest_text(ANSWER, title="answer")
    ingest_text(LINK, title="link")
    ingest_text(MOSS, title="moss")
    for n, text in enumerate(DISTRACTORS):
        ingest_text(text, title=f"distractor {n}")
    query = "Which engines for cargo ships does Zorblax build?"

    hybrid = hybrid_search(
        workspace=alice.workspace, query=query, limit=5, signals=["vector", "keyword"]
    )
    assert hybrid.chunks[0].text == ANSWER
    settings.RETRIEVAL_GRAPH_WEIGHT = 3.0  # the graph's first ranks outscore any other
    result = hybrid_search(workspace=alice.workspace, query=query, limit=5)
    ranked = [c.text for c in result.chunks]
    moss = next(c for c in result.chunks if c.text == MOSS)
    assert moss.signals.graph is not None and moss.signals.keyword is None
    # MOSS, reached through Quentaris, stays below the answer; LINK names Zorblax itself,
    # the entity the question names, and is strong enough to come first.
    assert ranked.index(ANSWER) < ranked.index(MOSS)
    assert ranked[0] == LINK
    assert ranked[1] == ANSWER
