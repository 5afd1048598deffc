"""What a chunk is indexed as (ingest/indexed_text.py): its document's title and heading
path before its own text, nothing said twice, within the model's budget. The counter is
the packaged model's own tokenizer."""

from __future__ import annotations

import pytest

from ingest.indexed_text import CONTEXT_MAX_CHARS, SEPARATOR, chunk_context, indexed_text

DESCRIPTION = (
    "Prints every line of the named files that matches one of the given patterns. "
    "Matching is case sensitive unless asked otherwise."
)


@pytest.fixture
def model(embedder):
    return {"counter": embedder.counter, "budget": embedder.chunk_token_budget}


def test_title_and_heading_path_come_before_the_text_the_chunk_keeps(model):
    indexed = indexed_text(
        title="zorbcat", heading_path=["zorbcat", "Description"], text=DESCRIPTION, **model
    )
    assert indexed.context == f"zorbcat{SEPARATOR}Description"
    assert indexed.text == f"zorbcat{SEPARATOR}Description\n{DESCRIPTION}"
    assert indexed.truncated == 0


def test_a_first_heading_that_is_the_title_without_the_site_name_stands_for_it():
    for title in ("zorbcat — Acme Tools 2.1 documentation", "Acme Tools | zorbcat"):
        context = chunk_context(
            title=title, heading_path=["zorbcat", "Options"], text="-i ignores case."
        )
        assert context == f"zorbcat{SEPARATOR}Options", title
    # A first heading that is not the page's name leaves the title in.
    context = chunk_context(title="zorbcat(1)", heading_path=["Options"], text="-i ignores case.")
    assert context == f"zorbcat(1){SEPARATOR}Options"


def test_a_chunk_that_opens_with_its_heading_does_not_repeat_it():
    # The near miss: the chunk starts at its section, so the heading is in its text already.
    opening = chunk_context(
        title="zorbcat",
        heading_path=["zorbcat", "Description"],
        text=f"## Description\n\n{DESCRIPTION}",
    )
    assert opening == "zorbcat"
    # Its title too, when the chunk opens with the page's own headings.
    first = chunk_context(
        title="zorbcat",
        heading_path=["zorbcat", "Synopsis"],
        text="# zorbcat\n\n## Synopsis\n\nzorbcat [-i]",
    )
    assert first == ""
    # A chunk further into the section does not have the heading: it keeps it.
    later = chunk_context(
        title="zorbcat", heading_path=["zorbcat", "Description"], text=DESCRIPTION
    )
    assert later == f"zorbcat{SEPARATOR}Description"


def test_the_context_is_bounded_and_the_whole_fits_the_model(model, embedder):
    title = "Reference " * 40
    path = ["Part one " * 10, "Chapter two", "Section three", "Options of the command " * 8]
    indexed = indexed_text(title=title, heading_path=path, text="word " * 400, **model)
    assert len(indexed.context) <= CONTEXT_MAX_CHARS
    assert indexed.context.startswith("Reference")  # the title, then the nearest heading
    assert "Options of the command" in indexed.context
    assert "Chapter two" not in indexed.context  # the middle gave way
    tokens = embedder.counter.count([indexed.text])[0]
    assert tokens <= model["budget"]
    # The text's tail was left out, and counted.
    assert indexed.truncated == 400 - (tokens - embedder.counter.count([indexed.context])[0])
    assert indexed.truncated > 0


def test_boilerplate_has_no_context(model):
    indexed = indexed_text(
        title="zorbcat",
        heading_path=["zorbcat"],
        text="Home | Download | Contact",
        boilerplate=True,
        **model,
    )
    assert indexed.context == "" and indexed.text == "Home | Download | Contact"
