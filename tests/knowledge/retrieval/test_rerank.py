"""Entity-coverage reranking (knowledge/retrieval/rerank.py): after fusion, a chunk that
mentions the question's specific entity rises above one that only resembles the question;
without a recognised entity, or with reranking off, the order stays the fused one."""

from __future__ import annotations

import pytest

from knowledge.retrieval import hybrid_search
from knowledge.retrieval.rerank import Coverage, RerankSettings, rerank, title_key
from knowledge.retrieval.types import ChunkSignals, SignalHit
from tests.knowledge.conftest import World


def _fused(*scores: float) -> list[tuple[int, float, ChunkSignals]]:
    return [
        (pk, score, ChunkSignals(vector=SignalHit(rank=pk, score=score)))
        for pk, score in enumerate(scores, start=1)
    ]


# --- the blend ------------------------------------------------------------------------------


def test_a_chunk_mentioning_the_specific_entity_rises_with_its_blended_score():
    fused = _fused(0.10, 0.09, 0.05)
    coverage = Coverage(weights={7: 0.8, 8: 0.2}, mentions={2: {7}})
    reranked = rerank(fused, coverage, RerankSettings(depth=3, mention_weight=0.2, title_weight=0))
    # chunk 2: 0.09 / 0.10 + 0.2 * 0.8 / (0.8 + 0.2) = 1.06 of the best score.
    assert [(pk, score) for pk, score, _ in reranked] == [(2, 0.106), (1, 0.1), (3, 0.05)]
    assert reranked[0][2] is fused[1][2]  # the signals travel with their chunk


def test_a_chunk_whose_document_is_titled_by_the_entity_rises():
    fused = _fused(0.10, 0.08, 0.07)
    coverage = Coverage(weights={7: 0.0}, titled={3})  # a hub: counts only through the title
    reranked = rerank(fused, coverage, RerankSettings(depth=3, mention_weight=1, title_weight=0.5))
    assert [pk for pk, _, _ in reranked] == [3, 1, 2]
    assert reranked[0][1] == pytest.approx(0.07 + 0.5 * 0.10)


def test_only_the_first_depth_chunks_are_reordered_and_the_rest_follow_unchanged():
    fused = _fused(0.10, 0.09, 0.08, 0.07)
    coverage = Coverage(weights={7: 1.0}, mentions={2: {7}, 4: {7}})
    reranked = rerank(fused, coverage, RerankSettings(depth=2, mention_weight=0.5, title_weight=0))
    assert [pk for pk, _, _ in reranked] == [2, 1, 3, 4]
    assert reranked[2:] == fused[2:]


@pytest.mark.parametrize(
    ("coverage", "config"),
    [
        (Coverage(weights={}), RerankSettings(depth=10, mention_weight=1, title_weight=1)),
        (Coverage(weights={7: 1.0}, mentions={2: {7}}), RerankSettings(0, 1, 1)),
        (Coverage(weights={7: 1.0}, mentions={2: {7}}), RerankSettings(10, 0, 0)),
        # A hub (specificity 0) mentioned: nothing to weigh.
        (Coverage(weights={7: 0.0}, mentions={2: {7}}), RerankSettings(10, 1, 0)),
    ],
)
def test_without_a_recognised_entity_or_with_reranking_off_the_order_is_unchanged(coverage, config):
    fused = _fused(0.10, 0.09, 0.05)
    assert rerank(fused, coverage, config) == fused


def test_a_title_names_the_topic_before_its_dash():
    assert title_key("json — JSON encoder and decoder") == "json"
    assert title_key("9. Classes") == title_key("Classes")
    assert title_key("") is None


# --- in the search --------------------------------------------------------------------------

# Close in words and meaning to the question, but about no entity of it.
LOOKALIKE = "The factory assembles engines and turbines for cargo ships."
# Names Zorblax, the question's entity, and nothing else of it.
ZORBLAX = "Zorblax keeps its ledgers in a blue cabinet."
QUESTION = "Does Zorblax assemble engines and turbines for cargo ships?"


@pytest.fixture
def ledgers(llm, ingest_text):
    world = World(entities={"Zorblax": "organization"})
    llm.responder = world
    ingest_text(LOOKALIKE, title="lookalike")
    ingest_text(ZORBLAX, title="ledgers")
    return world


def _order(alice, query: str) -> tuple[list[str], dict[str, float]]:
    result = hybrid_search(
        workspace=alice.workspace, query=query, signals=["vector", "graph"], record_access=False
    )
    return [c.text for c in result.chunks], result.timings_ms


def test_the_search_reranks_the_chunk_naming_the_question_entity_first(alice, ledgers, settings):
    settings.RETRIEVAL_GRAPH_WEIGHT = 0.0  # the fused order is the vectors' alone
    settings.RETRIEVAL_RERANK_DEPTH = 0
    fused, timings = _order(alice, QUESTION)
    assert fused == [LOOKALIKE, ZORBLAX]
    assert "rerank" not in timings

    settings.RETRIEVAL_RERANK_DEPTH = 10
    settings.RETRIEVAL_RERANK_MENTION_WEIGHT = 1.0
    settings.RETRIEVAL_RERANK_TITLE_WEIGHT = 0.0
    reranked, timings = _order(alice, QUESTION)
    assert reranked == [ZORBLAX, LOOKALIKE]
    assert "rerank" in timings


def test_the_search_keeps_the_fused_order_when_no_entity_is_recognised(alice, ledgers, settings):
    settings.RETRIEVAL_GRAPH_WEIGHT = 0.0
    question = "Who assembles engines and turbines for cargo ships?"
    settings.RETRIEVAL_RERANK_DEPTH = 0
    fused, _ = _order(alice, question)
    settings.RETRIEVAL_RERANK_DEPTH = 10
    settings.RETRIEVAL_RERANK_MENTION_WEIGHT = 1.0
    settings.RETRIEVAL_RERANK_TITLE_WEIGHT = 1.0
    reranked, timings = _order(alice, question)
    assert reranked == fused
    assert fused[0] == LOOKALIKE
    assert "rerank" not in timings
