"""Merging entities and the exact unmerge, also after later ingestion, and merged names
that keep landing on the survivor."""

from __future__ import annotations

import pytest

from ingest.actions.sources import do_reingest_source
from knowledge.actions.curation.merge import do_merge_entities, do_unmerge
from knowledge.actions.extraction.documents import do_extract_source
from knowledge.models import CurationRule, Entity, Mention, Relation, RelationEvidence
from tests.knowledge.actions.curation.curation_data import FIRST, SECOND, WORLD, entity, graph
from tests.llm_server import Reply
from workspaces.errors import Conflict


@pytest.fixture
def world(llm):
    llm.responder = WORLD
    return llm


def test_merge_moves_mentions_aliases_and_folds_self_loops_and_duplicate_edges(
    world, ingest_text, alice
):
    ingest_text(FIRST)
    google, alphabet, page = entity("Google"), entity("Alphabet"), entity("Larry Page")
    mentions = google.mention_count + alphabet.mention_count

    event = do_merge_entities(
        workspace=alice.workspace, survivor_id=alphabet.pk, merged_ids=[google.pk]
    )

    alphabet.refresh_from_db()
    google.refresh_from_db()
    assert google.state == "merged"
    assert google.merged_into_id == alphabet.pk
    assert alphabet.mention_count == mentions
    assert alphabet.aliases == ["Google"]
    assert alphabet.curated
    active = {
        (r.source.name, r.target.name, r.type.name): r
        for r in Relation.objects.filter(state="active").select_related("source", "target", "type")
    }
    # Google part_of Alphabet became a self-loop: folded away.
    assert ("Alphabet", "Alphabet", "part_of") not in active
    # Larry Page works_for Google and works_for Alphabet: one edge with both evidences.
    assert active[("Larry Page", "Alphabet", "works_for")].evidence_count == 2
    assert ("Sergey Brin", "Alphabet", "works_for") in active
    assert active[("Alphabet", "Mountain View", "located_in")].evidence_count == 2
    assert page.pk in {r.source_id for r in active.values()}
    assert event.action == "merge"
    assert CurationRule.objects.filter(kind="alias_pin", canonical="google", active=True).exists()


def test_unmerge_restores_exactly_even_after_another_source_was_ingested(world, ingest_text, alice):
    ingest_text(FIRST)
    before = graph(alice.workspace)
    google, alphabet = entity("Google"), entity("Alphabet")
    event = do_merge_entities(
        workspace=alice.workspace, survivor_id=alphabet.pk, merged_ids=[google.pk]
    )
    second = ingest_text(SECOND, title="second")
    # The merged name landed on the survivor, not on a new "Google".
    assert Entity.objects.filter(name="Google", state="active").count() == 0
    new_mentions = set(
        Mention.objects.filter(chunk__document__source=second).values_list("pk", flat=True)
    )
    assert new_mentions

    do_unmerge(workspace=alice.workspace, event_id=event.pk)

    after = graph(alice.workspace)
    # Every row that existed before the merge is exactly as it was...
    for pk, row in before["mentions"].items():
        assert after["mentions"][pk] == row
    for pk, row in before["evidence"].items():
        assert after["evidence"][pk] == row
    for pk, row in before["relations"].items():
        assert after["relations"][pk][:5] == row[:5]
    for pk, row in before["entities"].items():
        assert after["entities"][pk][:5] == row[:5]
        assert after["entities"][pk][7] == row[7]
    assert after["aliases"] == before["aliases"]
    # ...and the second source's "Google" mentions went back to Google.
    google.refresh_from_db()
    second_google = Mention.objects.filter(pk__in=new_mentions, surface_form="Google")
    assert {m.entity_id for m in second_google} == {google.pk}
    assert google.mention_count == before["entities"][google.pk][5] + second_google.count()
    # Weights come from evidence, so the pre-merge edges weigh what they weighed.
    for pk, row in before["relations"].items():
        if not RelationEvidence.objects.filter(
            relation_id=pk, chunk__document__source=second
        ).exists():
            assert after["relations"][pk][5:] == row[5:]
    # The pair is now known to be different.
    assert CurationRule.objects.filter(kind="not_same", active=True).count() == 1
    with pytest.raises(Conflict):
        do_unmerge(workspace=alice.workspace, event_id=event.pk)


def test_a_merge_leaves_mentions_at_the_survivor_s_places_where_they_were_and_undoes(
    llm, ingest_text, alice
):
    # "Tuple" has no whole word here, so it is found inside "Tuples", at the same place;
    # the two widgets are not in the text at all: each has one unlocated mention in the
    # same chunk. A mention is unique per (run, chunk, entity, start), nulls included.
    entities = [("Tuples", "technology"), ("Tuple", "product"),
                ("Alpha Widget", "product"), ("Beta Gadget", "product")]  # fmt: skip
    reply = "\n".join(f'("entity"<|>{name}<|>{kind}<|>x)' for name, kind in entities)
    llm.responder = lambda body: Reply(content=reply if len(body["messages"]) <= 2 else "")
    ingest_text("Tuples are immutable sequences.")
    before = graph(alice.workspace)
    tuples, tuple_, alpha, beta = (entity(name) for name, _ in entities)
    assert (
        Mention.objects.get(entity=tuple_).char_start
        == Mention.objects.get(entity=tuples).char_start
    )

    first = do_merge_entities(
        workspace=alice.workspace, survivor_id=tuples.pk, merged_ids=[tuple_.pk]
    )
    second = do_merge_entities(
        workspace=alice.workspace, survivor_id=alpha.pk, merged_ids=[beta.pk]
    )
    for survivor in (tuples, alpha):
        survivor.refresh_from_db()
        assert survivor.mention_count == 1
    assert Mention.objects.filter(entity__in=[tuple_, beta]).count() == 2

    do_unmerge(workspace=alice.workspace, event_id=second.pk)
    do_unmerge(workspace=alice.workspace, event_id=first.pk)
    assert graph(alice.workspace) == before


def test_a_merged_name_lands_on_the_survivor_after_reingest_and_reextract(
    world, ingest_text, alice
):
    source = ingest_text(FIRST)
    google, alphabet = entity("Google"), entity("Alphabet")
    do_merge_entities(workspace=alice.workspace, survivor_id=alphabet.pk, merged_ids=[google.pk])
    count = entity("Alphabet").mention_count

    do_reingest_source(source=source, enqueue=False)
    do_extract_source(source=source, force=True)

    assert not Entity.objects.filter(name="Google", state="active").exists()
    assert entity("Alphabet").mention_count == count
