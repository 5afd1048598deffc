"""Relation curation: every action and its exact undo, and the rules that hold through a
forced re-extraction."""

from __future__ import annotations

from typing import Any

import pytest
from django.forms.models import model_to_dict

from ingest.actions.sources import do_delete_source
from ingest.models import Chunk
from knowledge.actions.curation.relations import (
    do_add_relation,
    do_delete_relation,
    do_edit_relation,
    do_retype_relation,
    do_reverse_relation,
    do_undo_relation_event,
)
from knowledge.actions.extraction.documents import do_extract_source
from knowledge.models import (
    CurationEvent,
    Entity,
    Relation,
    RelationEvidence,
    RelationType,
    SourceExtraction,
)
from knowledge.models.curation import RelationNote, RelationRule
from tests.knowledge.conftest import World
from workspaces.errors import Conflict, InvalidInput, NotFound

WORLD = World(
    entities={
        "Ada Lovelace": "person",
        "Charles Babbage": "person",
        "Analytical Engine": "product",
        "London": "location",
    },
    relations=[
        ("Analytical Engine", "Charles Babbage", "created_by"),
        ("Ada Lovelace", "Charles Babbage", "works_for"),
        ("Ada Lovelace", "London", "located_in"),
    ],
)
TEXT = (
    "Charles Babbage designed the Analytical Engine. Ada Lovelace worked with Charles "
    "Babbage in London and wrote about the Analytical Engine."
)
CAMBRIDGE = "Charles Babbage studied in Cambridge."


@pytest.fixture
def world(llm):
    llm.responder = WORLD
    return llm


def entity(name: str) -> Entity:
    return Entity.objects.get(name=name, state="active")


def edge(source: str, target: str, type_name: str) -> Relation:
    return Relation.objects.get(
        source__name=source, target__name=target, type__name=type_name, state="active"
    )


def rows(workspace) -> dict[str, Any]:
    """Every row a relation action or its undo may touch, in full."""
    return {
        "relations": {r.pk: model_to_dict(r) for r in Relation.objects.for_workspace(workspace)},
        "evidence": {
            e.pk: model_to_dict(e) for e in RelationEvidence.objects.for_workspace(workspace)
        },
        "entities": {
            e.pk: (e.curated, e.degree, e.state) for e in Entity.objects.for_workspace(workspace)
        },
        "active_rules": sorted(
            RelationRule.objects.for_workspace(workspace)
            .filter(active=True)
            .values_list("pk", flat=True)
        ),
        "notes": sorted(RelationNote.objects.for_workspace(workspace).values_list("pk", flat=True)),
    }


def test_delete_hides_the_relation_and_its_undo_restores_every_row(world, ingest_text, alice):
    ingest_text(TEXT)
    relation = edge("Ada Lovelace", "Charles Babbage", "works_for")
    before = rows(alice.workspace)

    event = do_delete_relation(workspace=alice.workspace, relation_id=relation.pk)

    relation.refresh_from_db()
    assert relation.state == "deleted"
    assert event.action == "relation_delete"
    assert event.relation_id == relation.pk
    assert entity("Ada Lovelace").degree == before["entities"][entity("Ada Lovelace").pk][1] - 1
    undo = do_undo_relation_event(workspace=alice.workspace, event_id=event.pk)
    assert undo.action == "relation_undo"
    assert rows(alice.workspace) == before
    event.refresh_from_db()
    assert event.undone_by_id == undo.pk


def test_retype_reverse_and_edit_each_undo_to_the_exact_rows(world, ingest_text, alice):
    ingest_text(TEXT)
    relation = edge("Ada Lovelace", "Charles Babbage", "works_for")
    before = rows(alice.workspace)

    retyped = do_retype_relation(
        workspace=alice.workspace, relation_id=relation.pk, type_name="related_to"
    )
    relation.refresh_from_db()
    assert relation.type.name == "related_to"
    assert relation.curated
    do_undo_relation_event(workspace=alice.workspace, event_id=retyped.pk)
    assert rows(alice.workspace) == before

    reversed_ = do_reverse_relation(workspace=alice.workspace, relation_id=relation.pk)
    relation.refresh_from_db()
    assert (relation.source.name, relation.target.name) == ("Charles Babbage", "Ada Lovelace")
    do_undo_relation_event(workspace=alice.workspace, event_id=reversed_.pk)
    assert rows(alice.workspace) == before

    edited = do_edit_relation(
        workspace=alice.workspace, relation_id=relation.pk, description="  Her  collaborator. "
    )
    relation.refresh_from_db()
    assert (relation.description, relation.description_curated) == ("Her collaborator.", True)
    do_undo_relation_event(workspace=alice.workspace, event_id=edited.pk)
    assert rows(alice.workspace) == before


def test_add_records_who_and_why_and_its_undo_removes_every_row(world, ingest_text, alice):
    ingest_text(TEXT)
    chunk = Chunk.objects.for_workspace(alice.workspace).first()
    assert chunk is not None
    before = rows(alice.workspace)

    event = do_add_relation(
        workspace=alice.workspace,
        source_id=entity("Ada Lovelace").pk,
        target_id=entity("Analytical Engine").pk,
        type_name="related_to",
        description="Wrote its first program.",
        reason="Her notes describe it.",
        chunk_id=chunk.pk,
        char_start=chunk.char_start,
        char_end=chunk.char_start + 10,
        actor=alice.user,
    )

    relation = Relation.objects.get(curation_events=event)
    assert (relation.source.name, relation.target.name, relation.type.name) == (
        "Ada Lovelace", "Analytical Engine", "related_to",
    )  # fmt: skip
    assert relation.curated and relation.description == "Wrote its first program."
    assert relation.weight == 1.0  # no extracted evidence: weighs as one strong row
    note = RelationNote.objects.get(relation=relation)
    assert (note.actor, note.reason, note.chunk_id) == (
        alice.user,
        "Her notes describe it.",
        chunk.pk,
    )
    assert entity("Analytical Engine").curated
    do_undo_relation_event(workspace=alice.workspace, event_id=event.pk)
    assert rows(alice.workspace) == before


def test_conflicts_and_bad_input_are_refused_with_what_to_do(world, ingest_text, alice, bob):
    ingest_text(TEXT)
    ada, babbage = entity("Ada Lovelace"), entity("Charles Babbage")
    works_for = edge("Ada Lovelace", "Charles Babbage", "works_for")
    existing = do_add_relation(
        workspace=alice.workspace, source_id=ada.pk, target_id=babbage.pk, type_name="related_to"
    )
    with pytest.raises(Conflict, match=f"Relation {existing.relation_id} "):
        do_retype_relation(
            workspace=alice.workspace, relation_id=works_for.pk, type_name="related_to"
        )
    with pytest.raises(InvalidInput, match="two different"):
        do_add_relation(
            workspace=alice.workspace, source_id=ada.pk, target_id=ada.pk, type_name="uses"
        )
    with pytest.raises(InvalidInput, match="relation type"):
        do_retype_relation(
            workspace=alice.workspace, relation_id=works_for.pk, type_name="no_such_type"
        )
    RelationType.objects.filter(workspace=alice.workspace, name="uses").update(status="retired")
    with pytest.raises(InvalidInput, match="relation type"):
        do_retype_relation(workspace=alice.workspace, relation_id=works_for.pk, type_name="uses")
    chunk = Chunk.objects.for_workspace(alice.workspace).first()
    assert chunk is not None
    with pytest.raises(InvalidInput, match="not inside"):
        do_add_relation(
            workspace=alice.workspace, source_id=babbage.pk, target_id=ada.pk,
            type_name="works_for", chunk_id=chunk.pk, char_start=0, char_end=chunk.char_end + 1,
        )  # fmt: skip
    # Another workspace's relation and entities do not exist here.
    with pytest.raises(NotFound):
        do_delete_relation(workspace=bob.workspace, relation_id=works_for.pk)
    with pytest.raises(NotFound):
        do_add_relation(
            workspace=bob.workspace, source_id=ada.pk, target_id=babbage.pk, type_name="works_for"
        )


def test_an_undo_waits_for_later_changes_to_the_same_relation(world, ingest_text, alice):
    ingest_text(TEXT)
    relation = edge("Ada Lovelace", "Charles Babbage", "works_for")
    before = rows(alice.workspace)
    first = do_retype_relation(
        workspace=alice.workspace, relation_id=relation.pk, type_name="related_to"
    )
    second = do_reverse_relation(workspace=alice.workspace, relation_id=relation.pk)

    with pytest.raises(Conflict, match=f"Event {second.pk} "):
        do_undo_relation_event(workspace=alice.workspace, event_id=first.pk)
    do_undo_relation_event(workspace=alice.workspace, event_id=second.pk)
    do_undo_relation_event(workspace=alice.workspace, event_id=first.pk)
    assert rows(alice.workspace) == before
    with pytest.raises(Conflict, match="undone already"):
        do_undo_relation_event(workspace=alice.workspace, event_id=first.pk)


def test_curation_decisions_hold_through_a_forced_reextraction(world, ingest_text, alice):
    source = ingest_text(TEXT)
    deleted = edge("Ada Lovelace", "London", "located_in")
    retyped = edge("Ada Lovelace", "Charles Babbage", "works_for")
    reversed_ = edge("Analytical Engine", "Charles Babbage", "created_by")
    do_delete_relation(workspace=alice.workspace, relation_id=deleted.pk)
    retype = do_retype_relation(
        workspace=alice.workspace, relation_id=retyped.pk, type_name="related_to"
    )
    do_reverse_relation(workspace=alice.workspace, relation_id=reversed_.pk)

    do_extract_source(source=source, force=True)

    assert not Relation.objects.filter(type__name="located_in", state="active").exists()
    assert Relation.objects.get(pk=deleted.pk).state == "deleted"
    assert not Relation.objects.filter(type__name="works_for", state="active").exists()
    retyped.refresh_from_db()
    assert (retyped.type.name, retyped.state) == ("related_to", "active")
    assert retyped.evidence_count >= 1
    assert not Relation.objects.filter(
        source__name="Analytical Engine", type__name="created_by", state="active"
    ).exists()
    reversed_.refresh_from_db()
    assert (reversed_.source.name, reversed_.target.name) == (
        "Charles Babbage", "Analytical Engine",
    )  # fmt: skip
    assert reversed_.evidence_count >= 1
    account = SourceExtraction.objects.get(source=source)
    assert account.counts["relations_suppressed_by_curation"] == 1

    # New evidence rewrote the derived description; the retype can still be undone, and
    # then the edge takes extraction's evidence as works_for again.
    do_undo_relation_event(workspace=alice.workspace, event_id=retype.pk)
    do_extract_source(source=source, force=True)
    assert edge("Ada Lovelace", "Charles Babbage", "works_for").pk == retyped.pk
    assert not Relation.objects.filter(type__name="related_to", state="active").exists()


def test_a_hand_made_relation_survives_the_deletion_of_sources(world, ingest_text, alice):
    """It stays when the source its extracted evidence came from goes, and so do its ends
    when that source was all that mentioned them."""
    world.responder = World(
        entities={**WORLD.entities, "Cambridge": "location"},
        relations=[*WORLD.relations, ("Charles Babbage", "Cambridge", "located_in")],
    )
    ingest_text(TEXT)
    other = ingest_text(CAMBRIDGE, title="cambridge")
    babbage, cambridge = entity("Charles Babbage"), entity("Cambridge")
    extracted = edge("Charles Babbage", "Cambridge", "located_in")
    do_delete_relation(workspace=alice.workspace, relation_id=extracted.pk)
    by_hand = do_add_relation(
        workspace=alice.workspace, source_id=babbage.pk, target_id=cambridge.pk,
        type_name="located_in", reason="He studied there.", actor=alice.user,
    )  # fmt: skip
    do_extract_source(source=other, force=True)
    relation = Relation.objects.get(curation_events=by_hand)
    assert relation.evidence_count == 1  # extraction's evidence lands on the hand-made edge

    do_delete_source(source_id=other.pk)

    relation.refresh_from_db()
    assert (relation.state, relation.evidence_count, relation.weight) == ("active", 0, 1.0)
    assert RelationNote.objects.get(relation=relation).reason == "He studied there."
    assert Entity.objects.get(pk=cambridge.pk).state == "active"


def test_each_action_is_one_event_naming_its_relation(world, ingest_text, alice):
    ingest_text(TEXT)
    relation = edge("Ada Lovelace", "Charles Babbage", "works_for")
    do_edit_relation(workspace=alice.workspace, relation_id=relation.pk, description="Friends.")
    do_reverse_relation(workspace=alice.workspace, relation_id=relation.pk)
    events = list(CurationEvent.objects.values_list("action", "relation_id"))
    assert events == [("relation_reverse", relation.pk), ("relation_edit", relation.pk)]
