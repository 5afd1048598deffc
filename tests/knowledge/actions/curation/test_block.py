"""Names and pairs kept apart: a blocked name is never extracted again, a pair marked
not the same is remembered."""

from __future__ import annotations

import pytest

from knowledge.actions.curation.block import do_block_name, do_mark_not_same
from knowledge.models import CurationRule, Entity, Relation
from tests.knowledge.actions.curation.curation_data import FIRST, WORLD, entity
from workspaces.errors import InvalidInput


@pytest.fixture
def world(llm):
    llm.responder = WORLD
    return llm


def test_a_blocked_name_is_never_extracted_again(world, ingest_text, alice):
    do_block_name(workspace=alice.workspace, name="mountain view")
    ingest_text(FIRST)
    assert not Entity.objects.filter(canonical_name="mountain view").exists()
    assert not Relation.objects.filter(type__name="located_in").exists()


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
