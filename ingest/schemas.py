"""API schemas of the ingest app; every field listed explicitly."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from ninja import Field, Schema

from ingest.selectors import figures_of

# A source's extraction options, alike when it is created and when they are changed.
KnownOnly = Annotated[
    bool | None,
    Field(description="extraction adds evidence for existing entities only, never new ones"),
]
TokenBudget = Annotated[
    int | None,
    Field(ge=0, description="LLM tokens this source may spend; 0: the server default"),
]
Topic = Annotated[
    str | None,
    Field(
        max_length=1000,
        description="what the source is about, in words or a sentence: documents whose "
        "embedding is not near it (CRAWL_TOPIC_MIN_SIMILARITY) are kept but not extracted, "
        "counted as off_topic; '' removes it",
    ),
]


class TextSourceIn(Schema):
    kind: str = Field("text", description="'text' for pasted text (files: multipart upload)")
    title: str = Field("", max_length=300)
    text: str = Field(..., description="The text itself (Markdown welcome)")
    name: str = Field("", max_length=300, description="Source name; defaults to the title")
    tags: list[str] = Field(default_factory=list)
    known_only: bool | None = Field(
        None, description="extraction adds evidence for existing entities only, never new ones"
    )
    token_budget: int | None = Field(
        None, ge=0, description="LLM tokens this source may spend; 0: the server default"
    )


class CrawlSourceIn(Schema):
    kind: str = Field("crawl", description="'crawl' (with mode), 'url' (single) or 'sitemap'")
    url: str = Field(..., max_length=2048)
    mode: str | None = Field(None, description="single | sitemap | recursive (default: recursive)")
    max_pages: int | None = Field(None, ge=1, le=1_000_000)
    max_depth: int | None = Field(None, ge=0, le=100)
    allow: list[str] = Field(
        default_factory=list, description="regular expressions a URL must match"
    )
    deny: list[str] = Field(default_factory=list, description="regular expressions excluding URLs")
    rate: float | None = Field(None, ge=0, description="requests per second per host; 0: no limit")
    include_subdomains: bool = False
    use_llms_txt: bool = True
    render: bool = Field(
        False,
        description="load pages that seem to need JavaScript in headless Chromium (same "
        "SSRF guard, robots.txt and rate limit; no other origin's requests); refused (422) "
        "when the server has no Chromium or Playwright",
    )
    name: str = Field("", max_length=300)
    tags: list[str] = Field(default_factory=list)
    known_only: KnownOnly = None
    token_budget: TokenBudget = None
    topic: Topic = None
    refresh_every: int | str | None = Field(
        None,
        description="re-crawl on a schedule: seconds, or a duration like 30m, 6h, 1d or 2w "
        "(at least CRAWL_REFRESH_MIN_SECONDS, 1h by default); 0 or off: no schedule",
    )


class SourceOptionsIn(Schema):
    known_only: KnownOnly = None
    token_budget: TokenBudget = None
    topic: Topic = None
    refresh_every: int | str | None = Field(
        None,
        description="crawls only: re-crawl on a schedule: seconds, or a duration like 30m, 6h, 1d "
        "or 2w (at least CRAWL_REFRESH_MIN_SECONDS, 1h by default); 0 or off: no schedule",
    )


class CrawlPageOut(Schema):
    id: int
    url: str
    depth: int
    via: str
    status: str = Field(
        ..., description="queued | fetching | fetched | skipped | failed | ingested"
    )
    http_status: int | None
    reason: str
    final_url: str
    redirects: list[str]
    content_type: str
    fetched_at: datetime | None
    elapsed_ms: int | None
    document_id: int | None
    run_change: str = Field(
        "",
        description="what the current (or last) round did to its document: added | changed | "
        'unchanged | missing | removed; "" when nothing',
    )
    gone_at: datetime | None = Field(
        None,
        description="when it was first found gone (404/410, or no longer in the sitemap) "
        "while it had a document; null when it answers",
    )


class FailedDocument(Schema):
    id: int
    path: str
    error: str


class LastRunOut(Schema):
    """A crawl's last finished round, as its pages recorded it."""

    round: int = Field(..., description="the crawl's round: 1 is the first crawl")
    scheduled: bool = Field(..., description="started by the schedule (refresh_every)")
    status: str = Field(..., description="done | failed | cancelled")
    started_at: datetime | None
    finished_at: datetime | None
    added: int = Field(..., description="pages whose document is new")
    changed: int = Field(..., description="pages whose content changed: processed again")
    unchanged: int = Field(..., description="pages unchanged (304, same bytes or lastmod): no work")
    missing: int = Field(
        ...,
        description="pages gone (404/410, or no longer in the sitemap) whose document is kept "
        "until the grace period (CRAWL_GONE_GRACE_SECONDS) ends",
    )
    removed: int = Field(..., description="pages gone past the grace period: document retired")


class SourceOut(Schema):
    id: int
    kind: str
    name: str
    origin: str
    tags: list[str]
    status: str = Field(..., description="queued | running | done | failed | cancelled | deleting")
    stage: str
    counters: dict[str, int] = Field(
        ...,
        description="documents, done, failed, cancelled, pending, chunks, embedded; "
        "off_topic (documents kept but not extracted: not about the source's topic); "
        "needs_javascript (crawled pages that seem to need JavaScript to show their text); "
        "boilerplate_chunks and boilerplate_chars (text repeated across the source's "
        "documents: kept, never extracted or searched) and text_chars (the chunked text "
        "they are a share of); for crawls pages_*, among them what the current (or last) "
        "round did: pages_added, pages_changed, pages_unchanged, pages_missing, pages_removed",
    )
    activity: dict[str, Any] = Field(
        default_factory=dict,
        description="while it runs, what the slice in flight is doing inside a document: "
        "stage (parsing | chunking | embedding | extracting), done and total of unit "
        "(pages | chunks | windows), document, at; {} when nothing is in flight",
    )
    error: str
    warning: str
    known_only: bool
    token_budget: int | None = Field(..., description="this source's own LLM token budget")
    topic: str = Field("", description="what the source is about ('' : no relevance filter)")
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    # What the source holds and gave (ingest/selectors.py `with_figures`: a list reads them
    # for a whole page at once).
    document_count: int = Field(0, description="its documents (counters.documents)")
    chunk_count: int = Field(0, description="its documents' chunks (counters.chunks)")
    entity_count: int = Field(
        0, description="active entities mentioned in its documents (as its page lists them)"
    )
    updated_at: datetime | None = Field(
        None,
        description="when it last changed: the latest of created_at, started_at, "
        "finished_at and its last slice of work",
    )

    @staticmethod
    def resolve_document_count(obj: Any) -> int:
        return (
            int(obj.get("document_count", 0))
            if isinstance(obj, dict)
            else figures_of(obj).documents
        )

    @staticmethod
    def resolve_chunk_count(obj: Any) -> int:
        return int(obj.get("chunk_count", 0)) if isinstance(obj, dict) else figures_of(obj).chunks

    @staticmethod
    def resolve_entity_count(obj: Any) -> int:
        return (
            int(obj.get("entity_count", 0)) if isinstance(obj, dict) else figures_of(obj).entities
        )

    @staticmethod
    def resolve_updated_at(obj: Any) -> datetime | None:
        return obj.get("updated_at") if isinstance(obj, dict) else figures_of(obj).updated_at

    refresh_every: int | None = Field(
        None, description="crawls: seconds between scheduled re-crawls; null: none"
    )
    next_run_at: datetime | None = Field(
        None, description="when the next scheduled re-crawl starts (null: none scheduled)"
    )
    last_run: LastRunOut | None = Field(
        None, description="crawls: the last finished round and what it changed; null before"
    )

    # Resolved from the source's settings, or taken as given when re-validating a dict.
    @staticmethod
    def resolve_known_only(obj: Any) -> bool:
        if isinstance(obj, dict):
            return bool(obj.get("known_only"))
        return bool((obj.settings or {}).get("known_only"))

    @staticmethod
    def resolve_token_budget(obj: Any) -> int | None:
        if isinstance(obj, dict):
            return obj.get("token_budget")
        return (obj.settings or {}).get("token_budget") or None

    @staticmethod
    def resolve_topic(obj: Any) -> str:
        if isinstance(obj, dict):
            return str(obj.get("topic") or "")
        topic = (obj.settings or {}).get("topic")
        return topic if isinstance(topic, str) else ""

    @staticmethod
    def resolve_last_run(obj: Any) -> dict[str, Any] | None:
        last_run = obj.get("last_run") if isinstance(obj, dict) else obj.last_run
        return last_run or None


class DuplicateDocument(Schema):
    id: int
    path: str
    duplicate_of_id: int = Field(..., description="the document whose content this repeats")
    original_path: str
    original_title: str
    original_source_id: int
    original_source_name: str


class SourceDetailOut(SourceOut):
    failed: list[FailedDocument]
    duplicates: list[DuplicateDocument] = Field(
        default_factory=list,
        description="documents whose content was processed already for another document "
        "(of this source or another): they share its chunks and graph, counted once",
    )


class SourceCreated(SourceOut):
    documents: list[int] = Field(..., description="ids of the documents added")
    unchanged: list[int] = Field(..., description="ids of documents whose content was identical")


class DocumentOut(Schema):
    id: int
    source_id: int
    path: str
    title: str
    mime: str
    format: str
    size: int
    content_hash: str
    status: str
    error: str
    warnings: list[str]
    metadata: dict[str, Any]
    chunk_count: int
    duplicate_of_id: int | None = Field(
        None,
        description="status duplicate: the document (maybe of another source) whose content "
        "this repeats; its chunks and graph are shared, counted once",
    )
    duplicate_of_source_id: int | None = Field(None, description="that document's source")
    published_at: datetime | None = Field(
        None,
        description="the document's own date: the latest its content states (HTML metadata, "
        "PDF or DOCX properties), else its HTTP Last-Modified or file modification time",
    )
    published_source: str = Field(
        "", description="where published_at came from: http, html, pdf, docx, file, or ''"
    )
    topic_similarity: float | None = Field(
        None, description="cosine similarity to its source's topic (sources with one)"
    )
    off_topic: bool = Field(
        False, description="kept but not extracted: not about its source's topic"
    )
    needs_javascript: bool = Field(
        False,
        description="a crawled HTML page that seems to need JavaScript to show its text "
        "(a single-page-app shell, or a large page with tiny visible text)",
    )
    rendered: bool = Field(
        False, description="its HTML is the DOM headless Chromium rendered (a crawl with render)"
    )
    created_at: datetime
    updated_at: datetime

    @staticmethod
    def resolve_duplicate_of_source_id(obj: Any) -> int | None:
        if isinstance(obj, dict):
            return obj.get("duplicate_of_source_id")
        original = obj.duplicate_of if obj.duplicate_of_id else None
        return original.source_id if original is not None else None


class ChunkOut(Schema):
    id: int
    ordinal: int
    text: str
    char_start: int
    char_end: int
    token_count: int
    heading_path: list[str]
    content_hash: str
    embedding_model: str
    embedded: bool

    @staticmethod
    def resolve_embedded(obj: Any) -> bool:
        return bool(obj.embedding_model)


class ActionResult(Schema):
    source: SourceOut
    queued: int = Field(..., description="documents queued by this action")
