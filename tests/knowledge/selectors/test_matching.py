"""Why one entity was merged into another (knowledge/selectors/matching.py, `why_merged`):
one entry point that reads the curation history and answers with the rule that decided
each merge on the way, and its reasons."""

from __future__ import annotations

import pytest

from knowledge.actions.curation import do_merge_entities, do_unmerge
from knowledge.actions.resolution import resolve_entities
from knowledge.actions.schema import do_ensure_default_schema
from knowledge.consolidation.keys import entity_key
from knowledge.models import CurationEvent, Entity, EntityType
from knowledge.selectors.matching import MergeStep, why_merged


@pytest.fixture
def make(alice):
    """An active entity of the type in alice's workspace."""
    workspace = alice.workspace
    do_ensure_default_schema(workspace=workspace)
    types = {t.name: t for t in EntityType.objects.filter(workspace=workspace)}

    def entity(name: str, type_name: str = "technology", mentions: int = 1) -> Entity:
        return Entity.objects.create(
            workspace=workspace, name=name, canonical_name=entity_key(name, type_name),
            type=types[type_name], mention_count=mentions,
        )  # fmt: skip

    return entity


def test_an_acronym_merged_during_resolution_says_it_was_merged_as_an_acronym(alice):
    workspace = alice.workspace
    do_ensure_default_schema(workspace=workspace)
    organization = EntityType.objects.get(workspace=workspace, name="organization")
    resolve_entities(workspace, [("International Business Machines", organization)], create=True)
    resolve_entities(workspace, [("IBM", organization)], create=True)
    survivor = Entity.objects.get(name="International Business Machines")
    merged = Entity.objects.get(name="IBM")
    event = CurationEvent.objects.get(action="auto_merge")

    assert why_merged(workspace, merged.pk, survivor.pk) == [
        MergeStep(merged.pk, survivor.pk, event.pk, "acronym", ("acronym",))
    ]
    assert why_merged(workspace, survivor.pk, merged.pk) == []  # the other way round: never


def test_a_person_s_merge_says_manual_and_a_chain_of_merges_gives_each_step(alice, make):
    workspace = alice.workspace
    first, second, third = make("Postgres"), make("Postgres DB"), make("PostgreSQL", mentions=9)
    by_rule = do_merge_entities(
        workspace=workspace, survivor_id=second.pk, merged_ids=[first.pk], automatic=True,
        reasons=["typo"], rule="similarity",
    )  # fmt: skip
    by_hand = do_merge_entities(
        workspace=workspace, survivor_id=third.pk, merged_ids=[second.pk], actor=alice.user
    )

    assert why_merged(workspace, second.pk, third.pk) == [
        MergeStep(second.pk, third.pk, by_hand.pk, "manual", ())
    ]
    assert why_merged(workspace, first.pk, third.pk) == [
        MergeStep(first.pk, second.pk, by_rule.pk, "similarity", ("typo",)),
        MergeStep(second.pk, third.pk, by_hand.pk, "manual", ()),
    ]


def test_an_undone_merge_and_an_unmerged_pair_have_no_reason(alice, make):
    workspace = alice.workspace
    one, other, stranger = make("Redis"), make("Redis server"), make("Memcached")
    event = do_merge_entities(
        workspace=workspace, survivor_id=other.pk, merged_ids=[one.pk], automatic=True,
        reasons=["extra words (server)"], rule="similarity",
    )  # fmt: skip
    assert [step.rule for step in why_merged(workspace, one.pk, other.pk)] == ["similarity"]
    assert why_merged(workspace, one.pk, stranger.pk) == []
    assert why_merged(workspace, one.pk, one.pk) == []

    do_unmerge(workspace=workspace, event_id=event.pk)
    assert why_merged(workspace, one.pk, other.pk) == []


def test_an_automatic_merge_logged_before_rules_were_recorded_says_so(alice, make):
    workspace = alice.workspace
    one, other = make("Kafka"), make("Apache Kafka")
    event = do_merge_entities(
        workspace=workspace, survivor_id=other.pk, merged_ids=[one.pk], automatic=True,
        reasons=["extra words (apache)"],
    )  # fmt: skip
    assert "rule" not in event.payload
    assert why_merged(workspace, one.pk, other.pk) == [
        MergeStep(one.pk, other.pk, event.pk, "unrecorded", ("extra words (apache)",))
    ]


def test_another_workspace_s_merge_is_no_answer(alice, bob, make):
    one, other = make("Vault"), make("HashiCorp Vault")
    do_merge_entities(
        workspace=alice.workspace, survivor_id=other.pk, merged_ids=[one.pk], automatic=True,
        rule="similarity",
    )  # fmt: skip
    assert why_merged(bob.workspace, one.pk, other.pk) == []
