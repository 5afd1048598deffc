"""Curation actions: exact undo, and rules that survive re-ingestion and re-extraction."""

from __future__ import annotations

from typing import Any

import pytest

from ingest.actions.sources import do_reingest_source
from knowledge.actions.curation import (
    do_add_alias,
    do_block_name,
    do_delete_entity,
    do_mark_not_same,
    do_merge_entities,
    do_remove_alias,
    do_rename_entity,
    do_restore_entity,
    do_retype_entity,
    do_split_entity,
    do_unmerge,
)
from knowledge.actions.extraction.documents import do_extract_source
from knowledge.models import (
    Alias,
    CurationEvent,
    CurationRule,
    Entity,
    Mention,
    Relation,
    RelationEvidence,
)
from tests.knowledge.conftest import World
from tests.llm_server import Reply
from workspaces.errors import Conflict, InvalidInput

WORLD = World(
    entities={
        "Google": "organization",
        "Alphabet": "organization",
        "Larry Page": "person",
        "Sergey Brin": "person",
        "Mountain View": "location",
    },
    relations=[
        ("Larry Page", "Google", "works_for"),
        ("Larry Page", "Alphabet", "works_for"),
        ("Google", "Alphabet", "part_of"),
        ("Sergey Brin", "Google", "works_for"),
        ("Google", "Mountain View", "located_in"),
        ("Alphabet", "Mountain View", "located_in"),
    ],
)
FIRST = (
    "Larry Page and Sergey Brin founded Google in Mountain View. Google later became part of "
    "Alphabet, which Larry Page led; Alphabet is also in Mountain View."
)
SECOND = "Google opened another office in Mountain View, and Sergey Brin spoke there."


def entity(name: str) -> Entity:
    return Entity.objects.get(name=name)


def graph(workspace) -> dict[str, Any]:
    """Everything an unmerge must restore, by id."""
    return {
        "entities": {
            e.pk: (e.name, e.canonical_name, e.type_id, e.state, e.merged_into_id,
                   e.mention_count, e.description, tuple(e.aliases))
            for e in Entity.objects.for_workspace(workspace)
        },
        "aliases": sorted(
            Alias.objects.for_workspace(workspace).values_list("entity_id", "canonical")
        ),
        "mentions": dict(Mention.objects.for_workspace(workspace).values_list("pk", "entity_id")),
        "relations": {
            r.pk: (r.source_id, r.target_id, r.type_id, r.state, r.merged_into_id,
                   round(r.weight, 6), r.evidence_count)
            for r in Relation.objects.for_workspace(workspace)
        },
        "evidence": dict(
            RelationEvidence.objects.for_workspace(workspace).values_list("pk", "relation_id")
        ),
    }  # fmt: skip


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


def test_a_deleted_entity_does_not_return_and_restore_brings_it_back(world, ingest_text, alice):
    source = ingest_text(FIRST)
    brin = entity("Sergey Brin")
    do_delete_entity(workspace=alice.workspace, entity_id=brin.pk)
    assert not Relation.objects.filter(state="active", source=brin).exists()

    do_extract_source(source=source, force=True)
    ingest_text(SECOND, title="second")

    assert Entity.objects.filter(canonical_name="sergey brin").count() == 1
    assert entity("Sergey Brin").state == "deleted"
    do_restore_entity(workspace=alice.workspace, entity_id=brin.pk)
    assert entity("Sergey Brin").state == "active"
    assert Relation.objects.filter(state="active", source=brin).exists()


def test_a_blocked_name_is_never_extracted_again(world, ingest_text, alice):
    do_block_name(workspace=alice.workspace, name="mountain view")
    ingest_text(FIRST)
    assert not Entity.objects.filter(canonical_name="mountain view").exists()
    assert not Relation.objects.filter(type__name="located_in").exists()


def test_a_rename_and_a_retype_hold_after_reextraction(world, ingest_text, alice):
    source = ingest_text(FIRST)
    do_rename_entity(
        workspace=alice.workspace, entity_id=entity("Google").pk, name="Google Research"
    )
    do_retype_entity(
        workspace=alice.workspace, entity_id=entity("Mountain View").pk, type_name="organization"
    )

    do_extract_source(source=source, force=True)
    ingest_text(SECOND, title="second")

    google = entity("Google Research")
    assert not Entity.objects.filter(name="Google").exists()
    assert google.aliases == ["Google"]
    assert Mention.objects.filter(entity=google, surface_form="Google").count() >= 3
    assert Entity.objects.filter(canonical_name="mountain view").count() == 1
    assert entity("Mountain View").type.name == "organization"


def test_not_the_same_pairs_are_remembered(world, ingest_text, alice):
    ingest_text(FIRST)
    do_mark_not_same(
        workspace=alice.workspace, entity_id=entity("Google").pk, other_id=entity("Alphabet").pk
    )
    rule = CurationRule.objects.get(kind="not_same")
    assert sorted([rule.entity_id or 0, rule.other_id or 0]) == sorted(
        [entity("Google").pk, entity("Alphabet").pk]
    )
    with pytest.raises(InvalidInput):
        do_mark_not_same(
            workspace=alice.workspace, entity_id=entity("Google").pk, other_id=entity("Google").pk
        )


def test_aliases_are_added_pinned_and_removed(world, ingest_text, alice):
    ingest_text(FIRST)
    do_add_alias(workspace=alice.workspace, entity_id=entity("Alphabet").pk, name="Alphabet Inc.")
    assert entity("Alphabet").aliases == ["Alphabet Inc."]
    with pytest.raises(Conflict):
        do_add_alias(workspace=alice.workspace, entity_id=entity("Google").pk, name="alphabet inc")
    do_remove_alias(
        workspace=alice.workspace, entity_id=entity("Alphabet").pk, name="Alphabet Inc."
    )
    assert entity("Alphabet").aliases == []


def test_split_moves_chosen_mentions_to_a_new_entity_that_stays_apart(world, ingest_text, alice):
    ingest_text(FIRST)
    google = entity("Google")
    moved = list(Mention.objects.filter(entity=google).values_list("pk", flat=True)[:1])
    event = do_split_entity(
        workspace=alice.workspace, entity_id=google.pk, mention_ids=moved, name="Google Search",
        type_name="product",
    )  # fmt: skip
    new = Entity.objects.get(pk=event.payload["new_entity"])
    assert new.type.name == "product"
    assert new.mention_count == 1
    assert entity("Google").mention_count == google.mention_count - 1
    assert CurationRule.objects.filter(kind="not_same", active=True).exists()


def test_every_action_is_one_event(world, ingest_text, alice):
    ingest_text(FIRST)
    do_rename_entity(workspace=alice.workspace, entity_id=entity("Google").pk, name="Google LLC")
    do_block_name(workspace=alice.workspace, name="spam")
    assert list(CurationEvent.objects.values_list("action", flat=True)) == ["block", "rename"]
