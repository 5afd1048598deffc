"""Hybrid retrieval: the chunks, entities, relations and paths that answer a query.

Four signals run, each capped at RETRIEVAL_CANDIDATES and answered from an index — vector,
keyword, recognition and graph (why four: `signals`). Chunk rankings are fused with
weighted reciprocal rank fusion; everything is scoped to one workspace; a Markdown context
block meant for an LLM prompt quotes the hostile document text safely. A read with one
side effect: `record_access` counts what was returned.

- `search`: `hybrid_search`, the orchestrator: arguments checked, stages run and timed;
- `types`: the result (`SearchResult` and its hits) and the values stages pass on;
- `limits`: the request bounds the API schema states too;
- `signals/`: `vector`, `keyword`, `recognition`, `expansion` (the graph signal), `scope`;
- `fusion`: reciprocal rank fusion of chunks and of entities;
- `rerank`: the fused chunks' first ranks reordered by the query's entities they cover
  (RETRIEVAL_RERANK_*, off by default);
- `recency`: the fused chunks rescored by their documents' own dates, newer a little higher
  (RETRIEVAL_RECENCY_*, or a request's `recency`; off by default);
- `hydration`: the fused ids made into hits (entities, chunks, relations, paths);
- `access`: the access counts, the search's one write;
- `pool`: the thread pool the keyword signal and the access counts run on;
- `query_embedding`: the query's vector (one torch thread, a per-process LRU cache);
- `context`: the context block, and the text neutralising it needs.
- `evaluation`: labelled questions, the ranking metrics (hit@k, MRR@10, nDCG@10) and the
  paired bootstrap comparison of two rankings, pure;
- `comparison`: the five rankings `manage.py eval_retrieval` scores, each the search with
  some chunk signals left out (`hybrid_search(signals=...)`), and their margins over the
  best single signal.

Callers import `hybrid_search`, `SearchResult` and `close_retrieval_pool` from here, and
anything else from its own module.
"""

from __future__ import annotations

from knowledge.retrieval.pool import close_retrieval_pool
from knowledge.retrieval.search import hybrid_search
from knowledge.retrieval.types import SearchResult

__all__ = ["SearchResult", "close_retrieval_pool", "hybrid_search"]
