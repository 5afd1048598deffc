"""The graph signal weighs entities by specificity: a common name mentioned all over the
workspace (a hub) must not flood the graph's ranking, while a specific name's
neighbourhood lifts the chunk that only the graph relates to the query."""

from __future__ import annotations

import pytest

from knowledge.retrieval import hybrid_search
from knowledge.retrieval.signals.expansion import HUB_SHARE, specificity_of
from tests.knowledge.conftest import World
from tests.knowledge.retrieval.test_retrieval import DISTRACTORS, LINK, MOSS

# Every one of these mentions Widget, the hub of this small workspace.
WIDGET_NOTES = [
    "Widget sales rose in the spring quarter.",
    "Widget owners meet on the first Monday of the month.",
    "A Widget weighs less than a kilogram.",
    "Widget repairs take a week at most.",
    "The museum shows the first Widget ever made.",
    "Widget manuals are printed in four languages.",
    "Children paint their Widget in bright colours.",
    "Widget prices fell after the new factory opened.",
]


@pytest.fixture
def world(llm) -> World:
    responder = World()
    llm.responder = responder
    return responder


def test_specificity_falls_with_the_share_of_chunks_and_hubs_count_nothing():
    assert specificity_of(1, 10) == 1.0  # named once in a small workspace
    assert 0 < specificity_of(8, 10) < specificity_of(2, 10) < specificity_of(1, 10)
    chunks = 10_000
    hub = int(HUB_SHARE * chunks) + 1
    assert specificity_of(hub, chunks) == 0.0
    assert specificity_of(hub - 1, chunks) > 0.0
    # A small workspace has no hubs: every name there is mentioned in a large share.
    assert specificity_of(8, 10) > 0.0


def test_a_common_name_in_the_query_does_not_flood_the_graph_ranking(
    alice, world, ingest_text, settings
):
    world.entities.update(
        {"Zorblax": "organization", "Quentaris": "organization", "Widget": "product"}
    )
    world.relations.append(("Zorblax", "Quentaris", "related_to"))
    ingest_text(LINK, title="link")
    ingest_text(MOSS, title="moss")
    for n, text in enumerate(WIDGET_NOTES):
        ingest_text(text, title=f"widget {n}")
    for n, text in enumerate(DISTRACTORS):
        ingest_text(text, title=f"distractor {n}")
    settings.RETRIEVAL_GRAPH_WEIGHT = 1.0

    result = hybrid_search(
        workspace=alice.workspace, query="What does Zorblax build with a Widget?", limit=20
    )
    graph_rank = {c.text: c.signals.graph.rank for c in result.chunks if c.signals.graph}
    recognised = {e.name for e in result.entities if "recognised" in e.why}
    assert {"Zorblax", "Widget"} <= recognised
    # LINK names Zorblax itself; then MOSS, through Quentaris one hop from the specific
    # Zorblax, before every chunk of the hub Widget that the query names directly (counted
    # by mentions alone, all eight would come first).
    assert graph_rank[LINK] == 1
    assert graph_rank[MOSS] == 2
    assert all(graph_rank[t] > 2 for t in WIDGET_NOTES if t in graph_rank)
