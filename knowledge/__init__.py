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
                  evidence; entry points in extraction/documents.py; the relevance filter's
                  reads (relevance.py) and the workspace's monthly LLM budget, which
                  pauses extraction and resumes it (monthly_budget.py)
    resolution.py which entity an extracted name is (rules, aliases, keys, similarity,
                  embeddings, a document's short forms): merges automatically, adds an
                  alias or queues a suggestion
    review.py     the LLM's review of suggestions and description summaries
    curation/     every curation decision, each with an exact undo, one module per
                  subject: entities (rename, retype, delete, restore, split, aliases),
                  merge, block (names and "not the same"), relations (delete, retype,
                  reverse, describe or add by hand), types (merging two types, each row
                  retyped), suggestions (the review queue), rules (what consolidation
                  applies first), undo (one undo for every event, through the registry of
                  inverses; refused naming a later event that still stands, or cascade),
                  events (the log: its one writer, the lock, snapshots, the registry)
    quality.py    the quality page's Block (delete, and block the name in every type),
                  made of curation's actions (its undo is curation/block.py's)
    embeddings.py entity name vectors: made with a name, backfilled, rebuilt for a new model
    ask.py        answers with citations: retrieval, the prompt, the LLM (streamed), checked
                  citations, the monthly answer budget; global mode over community summaries
    evidence.py   the write funnel: evidence removal, derived fields, graph sync
    llm_calls.py  the one writer of `LlmCall` rows (every LLM request, priced)
    workspace_archive.py  a workspace exported to one archive file, or imported whole
    communities.py  communities stored, the map read, their LLM summaries
    consolidation.py, maintenance.py, schema.py

Reads: selectors/ (one module per subject), retrieval/ (hybrid search: signals,
fusion, reranking, hydration, context; the ranking comparison eval_retrieval prints),
export.py (the graph as JSON, GraphML, CSV or Cypher, streamed) and evaluation.py
(extraction quality against a gold set).

Engines (no HTTP, no actions): extraction/ (windows, parsing, validation, the offline
extractor, relevance.py: is a document about its source's topic; the LLM client is
system/llm/), consolidation/ (pure name matching: names/ by rule family, keys, the names a
text may be writing (text_names.py), the match decisions with their rules in decide.py
(asking an evidence port that selectors/match_evidence.py answers), match reasons, a
document's short forms),
answering/ (the answer prompt with passages
framed as data, citation parsing and checking, the system-prompt guard, the event payloads,
the answer's Markdown rendered to allow-listed HTML),
graph/ (backends: Postgres recursive CTEs, the Neo4j projection and its sync; communities),
archive/ (the workspace archive's file format, tables, export and import, with every byte
of an archive read as hostile).

Models: models/ (schema, graph, extraction, curation, search: the words of names, kept by
triggers; communities: their summaries); canonical.py (name normalisation); prompts/ (every
text sent to an LLM, as versioned files, and `load_prompt`, the one function reading them).
The layering is checked by import-linter contracts in pyproject.toml (`make layers`).
"""
