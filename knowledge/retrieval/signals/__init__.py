"""The four signals of a hybrid search, one module each, each capped at
RETRIEVAL_CANDIDATES and answered from an index.

Why several: vector search finds chunks that say the same thing in other words but misses
rare names and exact terms; full-text search finds those but not paraphrases; and neither
finds a chunk that is relevant only because of what the graph knows ("Acme's supplier" is
in a chunk about Globex that never names Acme).

- `vector`: the query's embedding against chunk and entity-name embeddings (HNSW);
- `keyword`: full-text search over the chunks, ranked in tiers;
- `recognition`: entities named in the query, through the consolidation's canonical key;
- `expansion`: the graph neighbourhood of the recognised and closest entities, and the
  chunks that mention what it reaches;
- `scope`: the "only these sources" clause the chunk signals share.
"""
