"""`manage.py backfill_embeddings` re-embeds the chunks of a workspace built before chunks
were embedded under their title and heading path (another indexed-text recipe), in
batches, with a progress bar, and leaves the current ones alone; run again it finds
nothing to do."""

from __future__ import annotations

import io
import sys
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from ingest.actions.sources import do_add_file, do_create_source, do_start_source
from ingest.embeddings import get_embedder
from ingest.indexed_text import RECIPE
from ingest.models import Chunk
from knowledge.retrieval.signals.keyword import keyword_signal
from tests.support import run_pending

pytestmark = pytest.mark.django_db


def vector_of(chunk: Chunk) -> list[float]:
    assert chunk.embedding is not None
    return [float(v) for v in chunk.embedding]


class Terminal(io.StringIO):
    """What a user's terminal is to the progress bar (it draws only on a terminal)."""

    def isatty(self) -> bool:
        return True


def reference_page(name: str, description: str) -> bytes:
    return f"# {name}\n\n## Synopsis\n\n{name} [OPTION]... FILE...\n\n## Description\n\n{description}\n".encode()


def ingest(workspace, name: str, description: str) -> list[Chunk]:
    source = do_create_source(workspace=workspace, kind="upload", name=name)
    do_add_file(source=source, path=f"{name}.md", chunks=[reference_page(name, description)])
    do_start_source(source=source, enqueue=False)
    run_pending(source)
    return list(Chunk.objects.filter(document__source=source).order_by("ordinal"))


def as_before(chunks: list[Chunk]) -> None:
    """The rows as ingestion wrote them before: a vector of the text alone, no context,
    no recipe."""
    vectors = get_embedder().encode([c.text for c in chunks])
    for chunk, vector in zip(chunks, vectors, strict=True):
        Chunk.objects.filter(pk=chunk.pk).update(embedding=vector, context="", embedding_recipe=0)


def test_backfill_reembeds_chunks_of_the_old_recipe_and_skips_current_ones(alice, monkeypatch):
    embedder = get_embedder()
    old = ingest(alice.workspace, "lighthouse", "Prints every line that matches a pattern.")
    current = ingest(alice.workspace, "orchard", "Sorts the lines of its input by the keys.")
    as_before(old)
    description = next(c for c in old if "Prints every line" in c.text)
    assert description.pk not in [
        pk for pk, _ in keyword_signal(alice.workspace.pk, "lighthouse", 50, None)
    ]
    kept = {c.pk: vector_of(c) for c in Chunk.objects.filter(pk__in=[c.pk for c in current])}
    encoded = embedder.texts_encoded
    terminal, out = Terminal(), StringIO()
    monkeypatch.setattr(sys, "stderr", terminal)

    call_command("backfill_embeddings", "--workspace", "acme", "--batch-size", "1", stdout=out)

    # Only the old rows were embedded, each once, in batches of one shown as they went.
    assert embedder.texts_encoded - encoded == len(old)
    assert f"{len(old)}/{len(old)}" in terminal.getvalue()
    assert "acme" in terminal.getvalue()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"{len(old)} chunk(s) updated to {embedder.model_id} ")
    assert lines[1].startswith("0 entity name(s) updated")  # the two lines as before
    assert lines[2].startswith(f"{len(old)} of the chunk(s) had a vector")
    for chunk in Chunk.objects.filter(pk__in=[c.pk for c in old]):
        assert chunk.embedding_recipe == RECIPE
    description.refresh_from_db()
    assert description.context == "lighthouse"
    assert np.allclose(
        vector_of(description),
        embedder.encode([f"lighthouse\n{description.text}"])[0],
        atol=1e-5,
    )
    assert description.pk in [
        pk for pk, _ in keyword_signal(alice.workspace.pk, "lighthouse", 50, None)
    ]
    for chunk in Chunk.objects.filter(pk__in=kept):
        assert np.array_equal(vector_of(chunk), kept[chunk.pk])

    # Run again: nothing left from another recipe.
    encoded = embedder.texts_encoded
    out = StringIO()
    call_command("backfill_embeddings", "--workspace", "acme", stdout=out)
    assert embedder.texts_encoded == encoded
    assert out.getvalue().startswith("0 chunk(s) updated")
