"""Rows with given vectors, written straight to the tables (no model, no pipeline), for the
tests of vector search and its indexes."""

from __future__ import annotations

from typing import Any

import numpy as np

from ingest.models import Chunk, Document, Source
from knowledge.actions.schema import do_ensure_default_schema
from knowledge.models import Entity, EntityType
from workspaces.models import Workspace


def fill_vectors(
    workspace: Workspace, vectors: np.ndarray, names: np.ndarray, *, model: str
) -> dict[str, Any]:
    """One document of chunks with `vectors`, and active entities ("Name <i>") of one type
    with the `names` vectors, all of `model`; returns their ids in the order of the
    vectors, and the type."""
    source = Source.objects.create(workspace=workspace, kind="upload", name="vectors")
    document = Document.objects.create(workspace=workspace, source=source, path="v.txt")
    dim = int(vectors.shape[1])
    chunks = Chunk.objects.bulk_create(
        Chunk(
            workspace=workspace, document=document, ordinal=i, text=f"chunk {i}",
            char_start=0, char_end=8, token_count=2, content_hash=f"{workspace.pk}-{i}",
            embedding=v.tolist(), embedding_model=model, embedding_dim=dim,
        )
        for i, v in enumerate(vectors)
    )  # fmt: skip
    do_ensure_default_schema(workspace=workspace)
    entity_type = EntityType.objects.filter(workspace=workspace).order_by("name").first()
    assert entity_type is not None
    entities = Entity.objects.bulk_create(
        Entity(
            workspace=workspace, type=entity_type, name=f"Name {i}", canonical_name=f"name {i}",
            embedding=v.tolist(), embedding_model=model, embedding_dim=int(names.shape[1]),
        )
        for i, v in enumerate(names)
    )  # fmt: skip
    return {
        "chunks": [c.pk for c in chunks],
        "entities": [e.pk for e in entities],
        "type": entity_type,
    }
