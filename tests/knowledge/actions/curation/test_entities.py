"""Curation of one entity: delete and restore, rename, retype, aliases and split, and
the rules that make each hold through re-ingestion and re-extraction."""

from __future__ import annotations

import pytest

from knowledge.actions.curation.entities import (
    do_add_alias,
    do_delete_entity,
    do_remove_alias,
    do_rename_entity,
    do_restore_entity,
    do_retype_entity,
    do_split_entity,
)
from knowledge.actions.extraction.documents import do_extract_source
from knowledge.models import CurationRule, Entity, Mention, Relation
from tests.knowledge.actions.curation.curation_data import FIRST, SECOND, WORLD, entity
from workspaces.errors import Conflict


@pytest.fixture
def world(llm):
    llm.responder = WORLD
    return llm


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
