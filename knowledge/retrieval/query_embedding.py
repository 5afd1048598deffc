"""The query's embedding: computed on one torch thread, and remembered per process.

Embedding the query is most of a search's CPU in a web process (the retrieval stages are
mostly the database's), and two things make it cheaper without changing a vector:

* one intra-op thread: a query is a few tokens, which a second thread cannot speed up,
  while waiting for that thread cost ten times the work whenever other requests (or
  PostgreSQL) kept the cores busy (bench/load.py, docs/BENCHMARKS.md);
* a bounded LRU cache (RETRIEVAL_QUERY_CACHE_SIZE entries, 0: none) keyed by the model id
  and the cleaned query text: the same question asked again, a page that searches on each
  keystroke's final form, an agent retrying, or the evaluation harness's five rankings
  of one question are answered from memory. The model is deterministic, so a cached vector
  is the one the model would compute; a different model (a new id) never meets another's.
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict

from django.conf import settings

from ingest.embeddings import EmbeddingUnavailable, get_embedder
from knowledge.retrieval.types import QueryVector

# torch intra-op threads for a query's embedding (see the module docstring).
QUERY_THREADS = 1

_cache: OrderedDict[tuple[str, str], array[float]] = OrderedDict()
_cache_lock = threading.Lock()


def embed_query(text: str, warnings: list[str]) -> QueryVector | None:
    """The query's vector, or None (and a warning) when no embedding model is available."""
    try:
        embedder = get_embedder()
    except EmbeddingUnavailable as exc:
        warnings.append(f"vector search skipped: embedding model unavailable ({exc})")
        return None
    key = (embedder.model_id, text)
    size = max(0, int(settings.RETRIEVAL_QUERY_CACHE_SIZE))
    if size:
        with _cache_lock:
            cached = _cache.get(key)
            if cached is not None:
                _cache.move_to_end(key)
                return QueryVector(model=embedder.model_id, values=cached.tolist())
    values = embedder.encode([text], threads=QUERY_THREADS)[0]
    if size:
        with _cache_lock:
            # Stored as doubles: the same floats, a quarter of a list's memory.
            _cache[key] = array("d", values)
            _cache.move_to_end(key)
            while len(_cache) > size:
                _cache.popitem(last=False)
    return QueryVector(model=embedder.model_id, values=values)


def clear_query_cache() -> None:
    """Forget every remembered query vector (tests; a process that swapped its model
    needs no call: the model id is part of the key)."""
    with _cache_lock:
        _cache.clear()
