"""The query's embedding (knowledge/retrieval/query_embedding.py): remembered per process,
bounded, keyed by model and text, the same vector the model computes, and computed on one
torch thread without changing the process's thread count for anything else."""

from __future__ import annotations

import pytest
import torch

from ingest.embeddings import get_embedder
from knowledge.retrieval.query_embedding import clear_query_cache, embed_query


@pytest.fixture
def embedder():
    clear_query_cache()
    yield get_embedder()
    clear_query_cache()


def test_a_query_asked_again_is_not_embedded_again(embedder, settings):
    settings.RETRIEVAL_QUERY_CACHE_SIZE = 8
    before = embedder.texts_encoded
    first = embed_query("who repaired the harbour crane?", [])
    again = embed_query("who repaired the harbour crane?", [])
    assert embedder.texts_encoded == before + 1
    assert first is not None and again is not None
    assert again.model == first.model == embedder.model_id
    assert again.values == first.values
    assert again.values is not first.values  # a caller changing its list changes no other
    # The remembered vector is exactly the model's.
    assert first.values == embedder.encode(["who repaired the harbour crane?"])[0]


def test_the_cache_is_bounded_least_recently_used_first(embedder, settings):
    settings.RETRIEVAL_QUERY_CACHE_SIZE = 2
    embed_query("alpha pumps", [])
    embed_query("beta valves", [])
    embed_query("alpha pumps", [])  # now the most recent of the two
    embed_query("gamma turbines", [])  # evicts "beta valves"
    before = embedder.texts_encoded
    embed_query("alpha pumps", [])
    embed_query("gamma turbines", [])
    assert embedder.texts_encoded == before
    embed_query("beta valves", [])
    assert embedder.texts_encoded == before + 1


def test_size_zero_turns_the_cache_off(embedder, settings):
    settings.RETRIEVAL_QUERY_CACHE_SIZE = 0
    before = embedder.texts_encoded
    embed_query("the same words", [])
    embed_query("the same words", [])
    assert embedder.texts_encoded == before + 2


def test_other_texts_are_other_keys(embedder, settings):
    settings.RETRIEVAL_QUERY_CACHE_SIZE = 8
    one = embed_query("harbour crane", [])
    other = embed_query("harbour cranes", [])
    assert one is not None and other is not None
    assert one.values != other.values


def test_the_thread_count_is_put_back(embedder):
    threads = torch.get_num_threads()
    torch.set_num_threads(2)  # whatever the machine: a count the cap differs from
    try:
        assert embedder.encode(["a query"], threads=1) == embedder.encode(["a query"])
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)
