"""A graph seed must be specific: an entity the question names by a whole name or alias,
whose name is rare in the workspace. A loose match (the canonical key equates "--record"
and "record"), a name most chunks mention, or a common word of the question that happens
to be a rare entity's name seeds nothing; a seed adds at most its specificity's share of
chunks. Each case with its near miss, on a workspace ingested through the real pipeline."""

from __future__ import annotations

import pytest

from knowledge.retrieval import hybrid_search
from knowledge.retrieval.signals.expansion import (
    GRAPH_MENTIONS_PER_ENTITY,
    SEED_MIN_SPECIFICITY,
    Specificity,
    mention_cap,
    specificity_of,
)
from knowledge.retrieval.signals.recognition import names_whole
from tests.knowledge.conftest import World
from tests.knowledge.retrieval.test_graph_specificity import WIDGET_NOTES

# Mentions Quibble, which the graph relates to Widget (WIDGET_SUPPLY) and to nothing else.
QUIBBLE = "Quibble mines copper in the western hills."
WIDGET_SUPPLY = "Quibble supplies the copper of every Widget."
# The option and what the graph relates it to; "record" is also a plain word here.
OPTION = "The --record option makes Ledgerline keep a journal of each run."
LEDGER = "Ledgerline stores its journal under the home directory."
# A product called Record, mentioned once; the word record is everywhere.
PRODUCT = "Record ships with Tallybook, its companion reader."
TALLY = "Tallybook opens journals in a window of its own."
COMMON_WORD = [
    "We record the tide every morning at the harbour.",
    "The clerk keeps a record of each ship that docks.",
    "A record of the weather is pinned to the door.",
    "Sailors record their hours in a small notebook.",
    "The lighthouse keeper had to record every storm.",
    "Each crane has a record of its repairs.",
]
FILLER = [
    "The bakery opens before dawn on weekdays.",
    "Gulls nest on the breakwater in spring.",
    "The ferry crosses the bay twice an hour.",
]


@pytest.fixture
def world(llm) -> World:
    responder = World()
    llm.responder = responder
    return responder


def reached(result) -> dict[str, int | None]:
    """Entity name -> depth from the nearest seed (None: not reached by the graph)."""
    return {e.name: e.depth for e in result.entities}


def test_a_whole_name_is_one_the_key_equates_without_other_marks_inside():
    assert names_whole("record", "Record") and names_whole("records", "record")
    assert names_whole("file", "`file`") and names_whole("file", "file()")
    assert names_whole("--record", "--record") and names_whole("St. Louis", "St Louis")
    assert not names_whole("record", "--record")
    assert not names_whole("file name", "file_name")
    assert not names_whole("copy from", "COPY ... FROM")


def test_a_seed_proposes_its_specificity_s_share_of_its_mentions():
    assert mention_cap(1.0) == GRAPH_MENTIONS_PER_ENTITY
    assert mention_cap(None) == GRAPH_MENTIONS_PER_ENTITY
    assert 1 < mention_cap(0.3) < GRAPH_MENTIONS_PER_ENTITY
    assert mention_cap(0.01) == 1


def test_counting_a_name_s_chunks_stops_where_it_is_too_common_to_seed():
    small = Specificity(16)
    assert specificity_of(small.common_from, 16) < SEED_MIN_SPECIFICITY
    assert specificity_of(small.common_from - 1, 16) >= SEED_MIN_SPECIFICITY
    large = Specificity(10_000)
    assert specificity_of(large.common_from, 10_000) == 0.0  # a hub
    assert specificity_of(large.common_from - 1, 10_000) > 0.0


def test_a_name_most_chunks_mention_is_not_expanded_while_a_rare_one_is(alice, world, ingest_text):
    world.entities.update(
        {"Widget": "product", "Quibble": "organization", "Zorblax": "organization"}
    )
    world.relations += [("Quibble", "Widget", "supplies"), ("Zorblax", "Quibble", "related_to")]
    for n, text in enumerate([*WIDGET_NOTES, WIDGET_SUPPLY, QUIBBLE, *FILLER]):
        ingest_text(text, title=f"note {n}")
    ingest_text("Zorblax buys copper from Quibble.", title="zorblax")

    common = hybrid_search(workspace=alice.workspace, query="Who makes a Widget?", limit=5)
    widget = next(e for e in common.entities if e.name == "Widget")
    assert "recognised" in widget.why and not widget.named
    assert reached(common).get("Quibble") is None  # Widget (9 of 15 chunks) seeds nothing
    assert all(c.signals.graph is None for c in common.chunks)

    rare = hybrid_search(workspace=alice.workspace, query="Who does Zorblax buy from?", limit=5)
    zorblax = next(e for e in rare.entities if e.name == "Zorblax")
    assert zorblax.named
    assert reached(rare)["Quibble"] == 1


def test_a_loose_match_of_a_question_word_is_no_seed_while_the_whole_name_is(
    alice, world, ingest_text
):
    world.entities.update({"--record": "concept", "Ledgerline": "product"})
    world.relations.append(("--record", "Ledgerline", "related_to"))
    for n, text in enumerate([OPTION, LEDGER, *FILLER]):
        ingest_text(text, title=f"page {n}")

    loose = hybrid_search(workspace=alice.workspace, query="How do I record the bakery hours?")
    option = next(e for e in loose.entities if e.name == "--record")
    assert "recognised" in option.why and not option.named
    assert reached(loose).get("Ledgerline") is None

    whole = hybrid_search(workspace=alice.workspace, query="What does --record do?")
    option = next(e for e in whole.entities if e.name == "--record")
    assert option.named
    assert reached(whole)["Ledgerline"] == 1


def test_a_common_word_that_names_a_rare_entity_is_no_seed_while_a_rare_word_is(
    alice, world, ingest_text
):
    # Record is mentioned once (its own mentions call it rare), but the word is in most
    # chunks; Tallybook is as rare in mentions and in words.
    world.entities.update({"Record": "product", "Tallybook": "product"})
    world.relations.append(("Record", "Tallybook", "related_to"))
    for n, text in enumerate([PRODUCT, TALLY, *COMMON_WORD, *FILLER]):
        ingest_text(text, title=f"page {n}")

    common = hybrid_search(workspace=alice.workspace, query="How do I record the tide?")
    record = next(e for e in common.entities if e.name == "Record")
    assert record.mention_count == 1
    assert "recognised" in record.why and not record.named
    assert reached(common).get("Tallybook") is None

    rare = hybrid_search(workspace=alice.workspace, query="What reads a Tallybook journal?")
    tallybook = next(e for e in rare.entities if e.name == "Tallybook")
    assert tallybook.named
    assert reached(rare)["Record"] == 1
