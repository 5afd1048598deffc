"""Name vectors are made once per name and process, and the ones a batch of documents is
about to create are made before its windows are resolved: the entities still carry the
vector of their own name, from the real packaged model, whichever way it was made.

Why: resolution used to call the model once per window for that window's new names, which
cost more than embedding the chunks themselves (bench/doc_quality.py speed).
"""

from __future__ import annotations

import pytest

from ingest.embeddings import get_embedder
from knowledge.actions.embeddings import forget_name_vectors, name_vectors
from knowledge.models import Entity

pytestmark = pytest.mark.django_db

TEXT = (
    "# Kestrel Navigation System\n\n"
    "Jonas Lindqvist designed the Kestrel Navigation System for Harbour Authority of "
    "Oslo. Maria Okafor tested it in Bergen with Nordic Marine Instruments.\n\n"
    "## Sensors\n\n"
    "Lindqvist later moved to Trondheim, where Kestrel Navigation System runs on "
    "every ferry of Fjord Line.\n"
)


@pytest.fixture(autouse=True)
def empty_cache():
    forget_name_vectors()
    yield
    forget_name_vectors()


def test_a_name_is_embedded_once_per_process():
    embedder = get_embedder()
    before = embedder.texts_encoded
    first = name_vectors(["Kestrel", "Bergen", "Kestrel"])
    assert embedder.texts_encoded - before == 2
    again = name_vectors(["Bergen", "Trondheim"])
    assert embedder.texts_encoded - before == 3  # only "Trondheim" is new
    assert again["Bergen"] == first["Bergen"]
    assert again["model"] == embedder.model_id
    assert again["dim"] == embedder.dimension
    assert first["Kestrel"] == pytest.approx(embedder.encode(["Kestrel"])[0], abs=1e-5)


def test_forgetting_embeds_again():
    embedder = get_embedder()
    name_vectors(["Fjord Line"])
    forget_name_vectors()
    before = embedder.texts_encoded
    name_vectors(["Fjord Line"])
    assert embedder.texts_encoded - before == 1


def test_entities_of_an_ingested_document_carry_their_own_name_vector(ingest_text):
    embedder = get_embedder()
    before = embedder.texts_encoded
    source = ingest_text(TEXT, title="Kestrel")
    used = embedder.texts_encoded - before
    assert source.status == "done"
    created = Entity.objects.filter(workspace=source.workspace).count()
    # Chunks and names, each name once: a name made ready for the batch is not embedded
    # again when its window is resolved.
    assert used <= source.counters["chunks"] + created
    entities = list(Entity.objects.filter(workspace=source.workspace, state="active"))
    assert len(entities) >= 3
    for entity in entities:
        assert entity.embedding_model == embedder.model_id
        assert entity.embedding is not None
        assert list(entity.embedding) == pytest.approx(embedder.encode([entity.name])[0], abs=1e-5)
