"""The curation log: every action is one event."""

from __future__ import annotations

import pytest

from knowledge.actions.curation.block import do_block_name
from knowledge.actions.curation.entities import do_rename_entity
from knowledge.models import CurationEvent
from tests.knowledge.actions.curation.curation_data import FIRST, WORLD, entity


@pytest.fixture
def world(llm):
    llm.responder = WORLD
    return llm


def test_every_action_is_one_event(world, ingest_text, alice):
    ingest_text(FIRST)
    do_rename_entity(workspace=alice.workspace, entity_id=entity("Google").pk, name="Google LLC")
    do_block_name(workspace=alice.workspace, name="spam")
    assert list(CurationEvent.objects.values_list("action", flat=True)) == ["block", "rename"]
