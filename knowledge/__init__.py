"""The knowledge graph built from ingested documents: schema registry, entities, relations
and their evidence, down to the sentence. Builds on `ingest`; the explorer and the API
read and curate it. docs/architecture.md draws the map; this is the table of contents.

Callers (parse, authorise, call one action or selector, render):
    api/          the JSON API, one router per subject, assembled in api/__init__.py
    admin.py      Django admin (edits go through the actions)
    management/   commands: extract, consolidate, merge, unmerge, search, export, stats,
                  quality, backfill_embeddings (chunks and entity names),
                  eval_retrieval (retrieval quality against labelled questions), ask, …
    tasks.py      background tasks: ids in, one action called
    stages.py     the pipeline stages ingest runs: extract, consolidate
    hooks.py      what knowledge plugs into the apps below: chunk deletion and moves,
                  workspace deletion, health counts, metrics, the upkeep jobs
    schemas/      request and response schemas of the API

Writes (actions/, `do_*`, keyword-only, one transaction each):
    extraction/   windows → cached runs (thread pool, budget) → entities, relations,
                  evidence; entry points in extraction/documents.py
    resolution.py which entity an extracted name is (rules, aliases, keys, similarity,
                  embeddings, a document's short forms): merges automatically, adds an
                  alias or queues a suggestion
    review.py     the LLM's review of suggestions and description summaries
    curation.py   every human action on entities, with an exact undo
    relation_curation.py  delete, retype, reverse, describe or add a relation by hand;
                  the rules that hold through re-extraction
    type_merge.py merging two types (each row retyped by curation's retype), the schema
                  change log and its undo
    undo.py       one undo for every curation event (each action's exact inverse; refused
                  naming a later event that still stands, or cascade)
    quality.py    the quality page's Block (delete, and block the name in every type) and
                  its undo, made of curation's actions
    embeddings.py entity name vectors: made with a name, backfilled, rebuilt for a new model
    ask.py        answers with citations: retrieval, the prompt, the LLM (streamed), checked
                  citations, the monthly answer budget; global mode over community summaries
    evidence.py   the write funnel: evidence removal, derived fields, graph sync
    consolidation.py, communities.py, maintenance.py, schema.py

Reads: selectors/ (one module per subject) and retrieval/ (hybrid search: signals,
fusion, reranking, hydration, context).

Engines (no HTTP, no actions): extraction/ (windows, prompts, the LLM client, parsing,
validation, the offline extractor), consolidation/ (pure name matching: keys, similarity,
match reasons, a document's short forms), answering/ (the answer prompt with passages
framed as data, citation parsing and checking, the system-prompt guard, the event payloads,
the answer's Markdown rendered to allow-listed HTML),
graph/ (backends: Postgres recursive CTEs, the Neo4j projection and its sync; communities).

Models: models/ (schema, graph, extraction, curation, search: the words of names, kept by
triggers; communities: their summaries); canonical.py (name normalisation).
The layering is checked by import-linter contracts in pyproject.toml (`make layers`).
"""
