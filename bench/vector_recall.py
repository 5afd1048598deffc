"""Vector search with many workspaces: recall and latency (issue 20, part 7).

    .venv/bin/python bench/vector_recall.py [--chunks 1000000] [--entities 200000]
        [--queries 200] [--seed 1] [--reuse] [--drop] [--baseline PATH] [--variants]
        [--parts chunks entities names] [--partial-indexes] [--workspace-indexes]
        [--ef-construction 64 200]

One database shared by 50 workspaces, as a multi-tenant server holds them: a few large
tenants (60%, 20%, 8%, ... of the chunks) and many small ones, the measured small
workspace holding 0.2% of the chunks (2,000 of 1M) and 0.25% of the entity names. The
vectors are 384-d, stored as the app stores them (`ingest_chunk.embedding` /
`knowledge_entity.embedding`, `embedding_dim` 384, the configured model's id) under the
app's own partial HNSW indexes, and clustered like text embeddings: a shared pool of
topics (a mixture of Gaussians on the sphere), each workspace writing about a subset of
them, so a small workspace's vectors sit inside the big tenants' clusters. Loaded
set-based (binary COPY, then INSERT ... SELECT); the indexes are built after the load.
`--reuse` keeps the data between runs (the HNSW build of 1M vectors takes a while).

Queries are new points of the measured workspace's own topics ("own") and, for the
workspaces but the big one, of the big tenant's topics they have nothing about ("foreign":
their chunks are far and few, the hardest case for a filtered index scan). Recall@10 =
|top 10 ∩ exact top 10| / 10, exact being the same SQL ordered by the bare column, which no
index serves; reported for the tiny, small, medium, a large (8%) and the big workspace,
with p50/p95 latency, for the app's chunk and entity vector signal (`vector_signals`, one call for
both) and consolidation's nearest name (`nearest_by_embedding`, recall@1 on new names at
cosine ~0.9 from one of the workspace's). `--baseline PATH` also runs the same functions from
another checkout (e.g. the code before a change) in the same run, interleaved.
`--variants` adds the raw index settings the choice was made from (ef_search,
iterative scan modes, max_scan_tuples, exact scan). `--workspace-indexes` runs the app's
`vector_indexes` upkeep job (an HNSW index of each workspace's own rows above
VECTOR_EXACT_MAX_ROWS) and measures the chunk searches again on what it built, then drops
it; `--partial-indexes` builds such indexes by hand for the measured small workspaces too.
`--ef-construction N …` builds the medium and the large workspace's own chunk index as the
app does, once per value of its build candidate list, and measures the app's chunk search
on each (`--parts` with no value skips the other measurements).
Uses its own database (`graphloom_bench`, or GRAPHLOOM_BENCH_DB) on the embedded server.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run(
        "bench.vector_recall_run",
        env={"GRAPHLOOM_DB_NAME": os.environ.get("GRAPHLOOM_BENCH_DB", "graphloom_bench")},
    )
