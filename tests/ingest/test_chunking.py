"""The chunker: exact slices, heading paths, model-sized chunks, never inside a word."""

from __future__ import annotations

import itertools
import re

import pytest

from ingest.chunking import chunk_text
from ingest.embeddings import ApproximateCounter, get_token_counter


@pytest.fixture(scope="module")
def model_counter():
    counter, budget = get_token_counter()
    assert budget == 254  # all-MiniLM-L6-v2: 256 positions minus [CLS] and [SEP]
    return counter


def sentences(n: int, topic: str = "graphs") -> str:
    return " ".join(
        f"Sentence {i} explains how {topic} connect entities to evidence." for i in range(n)
    )


DOC = (
    "# Handbook\n\nA short introduction. It has two sentences.\n\n"
    f"## Storage\n\n{sentences(80, 'tables')}\n\n"
    "### Indexes\n\n- HNSW for vectors\n- GIN for full text\n\n"
    "| index | kind |\n|---|---|\n| hnsw | vector |\n\n"
    f"## Retrieval\n\n{sentences(30, 'queries')}\n"
)


def test_chunks_are_exact_slices_in_order_and_cover_every_word(model_counter):
    chunks = chunk_text(DOC, counter=model_counter, max_tokens=254)
    assert len(chunks) > 3
    for chunk in chunks:
        assert DOC[chunk.start : chunk.end] == chunk.text
        assert chunk.text == chunk.text.strip()
    starts = [c.start for c in chunks]
    assert starts == sorted(starts)
    covered = "".join(DOC[c.start : c.end] + " " for c in chunks)
    assert set(re.findall(r"\w+", DOC)) == set(re.findall(r"\w+", covered))


def test_chunks_fit_the_model_measured_with_its_tokenizer(model_counter):
    chunks = chunk_text(DOC, counter=model_counter, max_tokens=254)
    assert all(c.token_count <= 254 for c in chunks)
    assert [c.token_count for c in chunks] == model_counter.count([c.text for c in chunks])
    assert max(c.token_count for c in chunks) > 200  # packed, not one sentence per chunk


def test_pieces_of_a_sentence_longer_than_a_chunk_carry_the_tokenizers_counts(model_counter):
    # One "sentence" (no full stop) of accents, CJK, brackets and punctuation: cut into pieces
    # by the tokenizer's offsets, whose counts are read from those offsets.
    text = " ".join(f"naïve-café{i}, résumé (東京) [x{i}]; über/alles" for i in range(400))
    chunks = chunk_text(text, counter=model_counter, max_tokens=60)
    assert len(chunks) > 20
    assert all(c.token_count <= 60 for c in chunks)
    assert [c.token_count for c in chunks] == model_counter.count([c.text for c in chunks])


def test_headings_start_chunks_and_are_kept_as_paths(model_counter):
    chunks = chunk_text(DOC, counter=model_counter, max_tokens=254)
    paths = [c.heading_path for c in chunks]
    assert paths[0] == ("Handbook",)
    assert ("Handbook", "Storage") in paths
    assert ("Handbook", "Storage", "Indexes") in paths
    assert ("Handbook", "Retrieval") in paths
    retrieval = [c for c in chunks if c.heading_path == ("Handbook", "Retrieval")]
    assert retrieval[0].text.startswith("## Retrieval")
    assert "tables" not in retrieval[0].text  # sections are not mixed
    indexes = next(c for c in chunks if c.heading_path[-1] == "Indexes")
    assert "- HNSW for vectors" in indexes.text
    assert "| hnsw | vector |" in indexes.text  # table rows stay with their section


def test_a_comment_in_a_code_block_is_code_not_a_heading(model_counter):
    # Manuals' examples are full of "# ..." comments: taken for headings, they cut the
    # example apart (its fence left at the end of the chunk before) and became the heading
    # path of everything after them.
    text = (
        "# Loans\n\nThe schedule is computed like this:\n\n"
        "```\n# Amortize a loan of 1000 with 4 payments\n>>> amortize(1000, 4)\n"
        "## not a heading either\n```\n\nIt returns the balance."
    )
    chunks = chunk_text(text, counter=model_counter, max_tokens=254)
    assert [c.heading_path for c in chunks] == [("Loans",)]
    assert chunks[0].text == text


def test_a_code_block_s_opening_fence_starts_the_chunk_of_its_code(model_counter):
    # The prose fills a chunk but for the fence; the example's first line does not fit
    # after it. The fence used to stay behind as the last line of the prose's chunk.
    code = "\n".join(f">>> total_{i} = amortize({i}, rate=0.05)" for i in range(20))
    text = f"# Loans\n\n{sentences(19, 'loans')}\n\n```\n{code}\n```\n\nThat is all."
    chunks = chunk_text(text, counter=model_counter, max_tokens=254)
    assert len(chunks) > 1
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text
        assert chunk.token_count <= 254
        # A fence ending a chunk closes a block, never opens one.
        if chunk.text.endswith("```"):
            assert text[: chunk.end].count("```") % 2 == 0, chunk.text
    assert any("```\n>>> total_0 " in c.text for c in chunks)


def test_overlap_repeats_trailing_sentences_within_a_section(model_counter):
    text = sentences(120)
    plain = chunk_text(text, counter=model_counter, max_tokens=100)
    overlapped = chunk_text(text, counter=model_counter, max_tokens=100, overlap_tokens=30)
    assert all(a.end <= b.start for a, b in itertools.pairwise(plain))
    assert all(b.start < a.end for a, b in itertools.pairwise(overlapped))
    assert all(c.token_count <= 100 for c in overlapped)


def test_long_sentences_are_cut_at_whitespace_never_inside_a_word(model_counter):
    words = [f"word{i}" for i in range(3000)]
    text = " ".join(words)  # one "sentence" of ~9,000 tokens
    chunks = chunk_text(text, counter=model_counter, max_tokens=254)
    assert len(chunks) > 20
    assert all(c.token_count <= 254 for c in chunks)
    assert [w for c in chunks for w in c.text.split()] == words


@pytest.mark.slow(reason="10 MB through the chunker")
def test_ten_megabyte_single_line_is_chunked_within_bounds(model_counter):
    text = ("lorem ipsum dolor sit amet " * 400_000)[:10_000_000]
    chunks = chunk_text(text, counter=model_counter, max_tokens=254)
    assert all(c.token_count <= 254 for c in chunks)
    assert chunks[0].start == 0
    assert chunks[-1].end == len(text.rstrip())
    assert all(text[c.start - 1].isspace() for c in chunks[1:])  # cut at spaces


def test_a_word_longer_than_a_chunk_is_the_only_hard_cut(model_counter):
    text = "start " + "x" * 50_000 + " end"
    chunks = chunk_text(text, counter=model_counter, max_tokens=254)
    assert chunks[0].text.startswith("start")
    assert chunks[-1].text.endswith("end")
    assert all(len(c.text) <= 254 * 12 for c in chunks)
    assert "".join(c.text for c in chunks).replace(" ", "") == text.replace(" ", "")


def test_approximate_counter_keeps_working_without_a_model():
    chunks = chunk_text(DOC, counter=ApproximateCounter(), max_tokens=120)
    assert all(DOC[c.start : c.end] == c.text for c in chunks)
    assert all(c.token_count <= 120 for c in chunks)


def test_empty_and_whitespace_text_give_no_chunks(model_counter):
    assert chunk_text("", counter=model_counter, max_tokens=254) == []
    assert chunk_text(" \n\n \t", counter=model_counter, max_tokens=254) == []


def test_counts_are_not_capped_after_the_model_encoded_something(model_counter, embedder):
    embedder.encode(
        ["warm up " * 400]
    )  # sentence-transformers re-enables truncation on its tokenizer
    assert model_counter.count(["word " * 1000]) == [1000]


def test_token_counts_stay_exact_where_sentences_are_not_joined_by_whitespace_alone(
    model_counter,
):
    # The model's tokenizer adds sentence counts instead of counting each chunk again; a
    # closing quote between two sentences and a cut inside an over-long word are not in
    # either sentence, so those chunks must still be counted whole.
    assert model_counter.additive
    text = (
        "# Quotes\n\n"
        + " ".join(
            f'She said "stop {i}." Then (they left {i}.) "Why?" he asked.' for i in range(60)
        )
        + "\n\n# Words\n\n"
        + " ".join(("ab" * 150 + " tail.") for _ in range(20))
        + "\n\n"
        + "z" * 4000
        + " end."
    )
    for overlap in (0, 32):
        chunks = chunk_text(text, counter=model_counter, max_tokens=60, overlap_tokens=overlap)
        assert [c.token_count for c in chunks] == model_counter.count([c.text for c in chunks])
        assert all(c.token_count <= 60 for c in chunks)


# --- A heading never stands alone ---------------------------------------------------------------


def heading_only(text: str) -> bool:
    return all(line.startswith("#") for line in text.splitlines() if line.strip())


def test_a_heading_joins_a_first_sentence_too_long_to_share_its_chunk():
    # One sentence of some 90 tokens under a title, with a 60-token budget: the sentence is
    # cut so that its first piece fits beside the heading.
    body = " ".join(f"part{i}" for i in range(45))
    text = f"# Widgets\n\n{body}\n\nA closing sentence."
    chunks = chunk_text(text, counter=ApproximateCounter(), max_tokens=60)
    assert chunks[0].text.startswith("# Widgets\n\npart0 part1")
    assert not any(heading_only(c.text) for c in chunks)
    assert all(c.token_count <= 60 for c in chunks)
    assert all(c.heading_path == ("Widgets",) for c in chunks)
    assert [w for c in chunks for w in c.text.split()][2:47] == body.split()


def test_a_title_and_a_section_heading_join_the_section_s_text():
    # The title's own section is tiny; the section after it must still take both headings
    # into its first chunk (a chunk target taken from the title's section cut them off).
    text = (
        "# Frob Reference\n\n## Synopsis\n\n```\nfrob [-v] file\n```\n\n"
        + sentences(30, "widgets")
        + "\n\n## Options\n\n"
        + sentences(30, "options")
    )
    chunks = chunk_text(text, counter=ApproximateCounter(), max_tokens=120)
    assert chunks[0].text.startswith("# Frob Reference\n\n## Synopsis\n\n```\nfrob [-v] file")
    assert not any(heading_only(c.text) for c in chunks)
    assert all(c.heading_path[0] == "Frob Reference" for c in chunks)


def test_a_heading_only_boilerplate_follows_joins_that_boilerplate():
    # A page's title, then the menu every page repeats, then the page's content: the title
    # has no content of its own before the menu, so it goes with the menu's chunk, and the
    # content under it keeps it as its heading path.
    menu = "Home\nProducts\nSupport Center\nAbout the Frob Documentation Portal"
    text = f"# Widgets\n\n{menu}\n\n{sentences(12, 'widgets')}"
    start = text.index("Home")
    menu_range = (start, start + len(menu))
    chunks = chunk_text(text, counter=ApproximateCounter(), max_tokens=60, boilerplate=[menu_range])
    assert chunks[0].boilerplate and chunks[0].text == f"# Widgets\n\n{menu}"
    content = [c for c in chunks if not c.boilerplate]
    assert content and all(c.heading_path == ("Widgets",) for c in content)
    assert not any(heading_only(c.text) for c in chunks)


def test_a_text_of_one_heading_is_one_chunk_of_it():
    chunks = chunk_text("# Widgets", counter=ApproximateCounter(), max_tokens=60)
    assert [(c.text, c.heading_path) for c in chunks] == [("# Widgets", ("Widgets",))]
