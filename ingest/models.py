"""Sources, documents and chunks: what Graphloom was given and the pieces it embeds.

Every row is workspace-scoped. A Document's text is the parsed text; a Chunk is a slice of
it (`document.text[char_start:char_end] == chunk.text`), so evidence can point back to the
exact characters. Chunk order within a document is the NEXT_CHUNK chain.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from pgvector.django import VectorField

from workspaces.models import WorkspaceScopedModel


class SourceKind(models.TextChoices):
    UPLOAD = "upload", "Upload"
    TEXT = "text", "Text"
    URL = "url", "Single URL"
    SITEMAP = "sitemap", "Sitemap"
    CRAWL = "crawl", "Crawl"


class SourceStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    DELETING = "deleting", "Deleting"


# A source in one of these states does no more work until someone starts it again.
FINISHED_STATUSES = frozenset({SourceStatus.DONE, SourceStatus.FAILED, SourceStatus.CANCELLED})
# Work still queued or running for a source in one of these states must stop.
STOPPED_STATUSES = frozenset({SourceStatus.CANCELLED, SourceStatus.DELETING})
# Sources whose documents come from a crawl (CrawlPage rows).
CRAWL_KINDS = frozenset({SourceKind.URL, SourceKind.SITEMAP, SourceKind.CRAWL})


class PublishedSource(models.TextChoices):
    """Where a document's own date (Document.published_at) came from
    (ingest/parsers/dates.py); NONE when nothing sane states one."""

    NONE = "", "None"
    HTTP = "http", "HTTP Last-Modified"
    HTML = "html", "HTML metadata"
    PDF = "pdf", "PDF metadata"
    DOCX = "docx", "Word document properties"
    FILE = "file", "File modification time"


class DocumentStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    PARSED = "parsed", "Parsed"
    CHUNKED = "chunked", "Chunked"
    EMBEDDED = "embedded", "Embedded"
    # Reached through the extraction stage (knowledge app), recorded by the pipeline from
    # the stage's report; later stages may add their own.
    EXTRACTED = "extracted", "Extracted"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    # Terminal: the same content (content hash) was processed already in the workspace; the
    # document reuses that one's chunks, vectors and graph (`Document.duplicate_of`).
    DUPLICATE = "duplicate", "Duplicate"

    def allowed_next(self) -> frozenset[DocumentStatus]:
        """The statuses a document in this one may be moved to (DOCUMENT_STATUS_MOVES)."""
        return frozenset(to for to, froms in DOCUMENT_STATUS_MOVES.items() if self in froms)


# A document in one of these states still has stages ahead of it.
PENDING = (
    DocumentStatus.QUEUED,
    DocumentStatus.PARSED,
    DocumentStatus.CHUNKED,
    DocumentStatus.EMBEDDED,
    DocumentStatus.EXTRACTED,
)

_ANY = frozenset(DocumentStatus)
_WORKING = frozenset(PENDING)

# Every move a document's status makes, by where it goes: {to: the statuses it may come
# from}. Taken from what the code does, so that a move nobody meant is an error instead of
# a document stuck or done twice: every write of Document.status goes through
# ingest/actions/document_state.py, which refuses any other move (InvalidTransition).
DOCUMENT_STATUS_MOVES: dict[DocumentStatus, frozenset[DocumentStatus]] = {
    # From anything: changed bytes of an upload or a page, a re-run, a retry, a duplicate
    # detached from its original (ingest/actions/duplicates.py).
    DocumentStatus.QUEUED: _ANY,
    # The first parse, a parse again of content that changed on its way through the
    # stages, and a done document sent back to chunking because its source's boilerplate
    # changed (ingest/actions/boilerplate.py).
    DocumentStatus.PARSED: _WORKING | {DocumentStatus.DONE},
    DocumentStatus.CHUNKED: frozenset({DocumentStatus.PARSED}),
    # Embedded again when a run is resumed or repeated.
    DocumentStatus.EMBEDDED: frozenset({DocumentStatus.CHUNKED, DocumentStatus.EMBEDDED}),
    DocumentStatus.EXTRACTED: frozenset({DocumentStatus.EMBEDDED}),
    # The end of the pipeline, whichever stages it is configured with; a duplicate of
    # finished content promoted to original in place of the one deleted or changed.
    DocumentStatus.DONE: _WORKING | {DocumentStatus.DUPLICATE},
    # When parsing finds the content processed already.
    DocumentStatus.DUPLICATE: _WORKING,
    DocumentStatus.CANCELLED: _WORKING,
    # From the stage it was in; a stage under way when its source was cancelled still
    # fails its document when it fails, so the person sees why.
    DocumentStatus.FAILED: _WORKING | {DocumentStatus.CANCELLED},
}


@dataclass(frozen=True, slots=True)
class SourceProgress:
    """How far a source's work is, from its counters: documents created and settled (no
    longer pending), and for a crawl, pages discovered and settled (no longer queued)."""

    documents: int
    documents_settled: int
    pages: int
    pages_settled: int
    failed: int

    @property
    def done(self) -> int:
        return self.documents_settled + self.pages_settled

    @property
    def total(self) -> int:
        return self.documents + self.pages


@dataclass(frozen=True, slots=True)
class BoilerplateShare:
    """What a source skipped as boilerplate (ingest/boilerplate.py), from its counters:
    chunks flagged boilerplate, the characters they hold, and the characters of chunked text
    of the source's documents that they are a share of."""

    chunks: int
    chars: int
    text_chars: int

    @property
    def percent(self) -> float:
        return round(100 * self.chars / self.text_chars, 1) if self.text_chars else 0.0


class Source(WorkspaceScopedModel):
    kind = models.CharField(max_length=16, choices=SourceKind.choices)
    name = models.CharField(max_length=300)
    origin = models.TextField(blank=True, help_text="Where it came from: a URL, a path, 'api'")
    tags = models.JSONField(default=list, blank=True)
    settings = models.JSONField(default=dict, blank=True)
    status = models.CharField(
        max_length=16, choices=SourceStatus.choices, default=SourceStatus.QUEUED
    )
    stage = models.CharField(max_length=32, blank=True)
    # Recomputed from the documents by do_refresh_source_progress, never incremented blindly.
    counters = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    warning = models.TextField(blank=True)
    created_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When a slice of this source's work last started: sources take turns in that order
    # (ingest/dispatch.py).
    last_slice_at = models.DateTimeField(null=True, blank=True)
    # What the slice in flight is doing, for live progress inside a document: stage,
    # document, done and total of its unit (chunks, windows), and when (ingest/actions/
    # activity.py). Empty when no slice runs.
    activity = models.JSONField(default=dict, blank=True)
    # Scheduled re-crawls (crawl kinds only; ingest/actions/crawl/schedule.py): the interval
    # in seconds (null: never by itself), and when the workers' `recrawl` job starts the
    # next round (the end of the last run plus the interval).
    refresh_every = models.PositiveIntegerField(null=True, blank=True)
    next_run_at = models.DateTimeField(null=True, blank=True)
    # The last finished round of a crawl, from its pages (do_refresh_source_progress):
    # round, started_at, finished_at, status, scheduled, and the pages it added, changed,
    # left unchanged, removed (documents retired) and found missing (gone, kept for the
    # grace period). Empty before the first round ends and for other kinds.
    last_run = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["workspace", "-created_at"]),
            # The `recrawl` job's look for due sources.
            models.Index(
                fields=["next_run_at"],
                name="source_next_run",
                condition=models.Q(next_run_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return self.name

    # The state rules every caller (actions, screens, commands) asks the source about.

    @property
    def is_crawl(self) -> bool:
        return self.kind in CRAWL_KINDS

    @property
    def is_active(self) -> bool:
        """Queued or running: someone waiting for the source keeps waiting."""
        return self.status in {SourceStatus.QUEUED, SourceStatus.RUNNING}

    @property
    def is_finished(self) -> bool:
        return self.status in FINISHED_STATUSES

    @property
    def can_cancel(self) -> bool:
        """What the screens offer; `do_cancel_source` also accepts an already cancelled
        source (cancelling it again changes nothing)."""
        return self.is_active

    @property
    def can_rerun(self) -> bool:
        return self.is_finished

    @property
    def can_retry(self) -> bool:
        """Finished with documents that failed or were cancelled."""
        counters = self.counters or {}
        return self.is_finished and bool(counters.get("failed") or counters.get("cancelled"))

    @property
    def can_delete(self) -> bool:
        return self.status != SourceStatus.DELETING

    @property
    def progress(self) -> SourceProgress:
        counters = self.counters or {}
        documents = int(counters.get("documents", 0))
        pages = int(counters.get("pages_discovered", 0))
        return SourceProgress(
            documents=documents,
            documents_settled=documents - int(counters.get("pending", 0)),
            pages=pages,
            pages_settled=pages - int(counters.get("pages_queued", 0)),
            failed=int(counters.get("failed", 0)),
        )

    @property
    def boilerplate(self) -> BoilerplateShare:
        counters = self.counters or {}
        return BoilerplateShare(
            chunks=int(counters.get("boilerplate_chunks", 0)),
            chars=int(counters.get("boilerplate_chars", 0)),
            text_chars=int(counters.get("text_chars", 0)),
        )


class Document(WorkspaceScopedModel):
    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="documents")
    # The identity of a document within its source: a relative path or a URL.
    path = models.TextField()
    title = models.TextField(blank=True)
    mime = models.CharField(max_length=120, blank=True)
    format = models.CharField(max_length=16, blank=True)
    size = models.BigIntegerField(default=0)
    # SHA-256 of the raw bytes: unchanged content does no work at all.
    content_hash = models.CharField(max_length=64, blank=True)
    # SHA-256 of what was parsed last; differs from content_hash until processing catches up.
    processed_hash = models.CharField(max_length=64, blank=True)
    blob = models.CharField(
        max_length=500, blank=True, help_text="Stored raw file, under MEDIA_ROOT"
    )
    text = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    status = models.CharField(
        max_length=16, choices=DocumentStatus.choices, default=DocumentStatus.QUEUED
    )
    error = models.TextField(blank=True)
    warnings = models.JSONField(default=list, blank=True)
    # The document of the workspace whose chunks (and so vectors and graph) this one's
    # identical content shares: the same content counts once (ingest/actions/duplicates.py).
    # Never a chain: the original of a duplicate is itself no duplicate. Deleting the
    # original promotes a duplicate first; SET_NULL is only the database's last resort.
    duplicate_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="duplicates"
    )
    # The document's own date (ingest/parsers/dates.py): the latest date its content states
    # (HTML metadata, PDF or DOCX properties), else what carried it (the crawl's HTTP
    # Last-Modified, an upload's file modification time); null when nothing sane does.
    # Search and Ask filter on it (published_from / published_to) and may prefer newer
    # documents by it (knowledge/retrieval/recency.py). `created_at` is the ingestion date.
    published_at = models.DateTimeField(null=True, blank=True)
    published_source = models.CharField(
        max_length=8, choices=PublishedSource.choices, blank=True, default="", db_default=""
    )
    # Measured against the source's topic (its `topic` setting) when the document reached
    # extraction: the cosine similarity of their embeddings, and whether that fell below
    # CRAWL_TOPIC_MIN_SIMILARITY, so the document was kept but not extracted. Null / False
    # for a source without a topic. Written by the pipeline from the stage's report.
    topic_similarity = models.FloatField(null=True, blank=True)
    off_topic = models.BooleanField(default=False, db_default=False)
    # A crawled HTML page that seems to need JavaScript to show its text (a single-page-app
    # shell, or a large page with tiny visible text: ingest/crawler/javascript.py), and
    # whether its stored HTML is the DOM headless Chromium rendered (a crawl with `render`).
    needs_javascript = models.BooleanField(default=False, db_default=False)
    rendered = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["source", "path"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "path"], name="document_unique_path_in_source"
            )
        ]
        indexes = [
            models.Index(fields=["source", "status"]),
            # Finding the original of a content hash when a document is parsed.
            models.Index(fields=["workspace", "content_hash"], name="document_ws_hash"),
            # Searches narrowed to documents of some dates (published_from / published_to).
            models.Index(fields=["workspace", "published_at"], name="document_ws_published"),
        ]

    def __str__(self) -> str:
        return self.title or self.path


class Chunk(WorkspaceScopedModel):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    text = models.TextField()
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    token_count = models.PositiveIntegerField()
    heading_path = models.JSONField(default=list, blank=True)
    # SHA-256 of the text: the key for reusing embeddings (and, later, extractions).
    content_hash = models.CharField(max_length=64, db_index=True)
    # Any dimension; HNSW indexes are per dimension (partial expression indexes), see
    # migrations and ingest/embeddings.py.
    embedding = VectorField(null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True)
    embedding_dim = models.PositiveSmallIntegerField(null=True, blank=True)
    # The title and heading path the chunk is indexed under (ingest/indexed_text.py): read
    # before the text by the model and by the full-text index, never shown as the chunk's.
    context = models.TextField(blank=True, default="", db_default="")
    # The indexed-text recipe (ingest.indexed_text.RECIPE) the vector was computed with from
    # `context` and `text`; 0 when it was not, or the context changed since:
    # `backfill_embeddings` re-embeds every chunk of another recipe.
    embedding_recipe = models.PositiveSmallIntegerField(default=0, db_default=0)
    search_vector = models.GeneratedField(
        expression=SearchVector("context", "text", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    retrieved_count = models.PositiveIntegerField(default=0)
    last_retrieved_at = models.DateTimeField(null=True, blank=True)
    # Only text repeated across the documents of the source (navigation, footers, banners:
    # ingest/boilerplate.py). Kept, so offsets, citations and counts stay whole, but never
    # extracted and never returned by search.
    boilerplate = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["document", "ordinal"]
        constraints = [
            # Deferred: re-ingestion renumbers kept chunks in place within one transaction.
            models.UniqueConstraint(
                fields=["document", "ordinal"],
                name="chunk_unique_ordinal",
                deferrable=models.Deferrable.DEFERRED,
            )
        ]
        indexes = [
            GinIndex(fields=["search_vector"], name="chunk_search_vector_gin"),
            models.Index(fields=["workspace", "content_hash"], name="chunk_ws_hash"),
            # prune: old chunks (never retrieved ones among them). Not partial on
            # retrieved_count: a column in an index predicate makes every update of it a
            # non-HOT update, rewriting each index (HNSW included) on every search hit.
            models.Index(fields=["workspace", "created_at"], name="chunk_ws_created"),
        ]

    def __str__(self) -> str:
        return f"{self.document_id}#{self.ordinal}"


class DocumentBlock(WorkspaceScopedModel):
    """One distinct line of a document's text, by fingerprint (ingest/boilerplate.py): how a
    source knows which text repeats across its documents. A fingerprint held by at least
    BOILERPLATE_MIN_DOCUMENTS documents of the source (duplicates aside) repeats.
    `repeated` is what the document's current chunks were cut with; where it differs from
    what the source's counts say now, the document is chunked again
    (ingest/actions/boilerplate.py). Rows go with their document, so deleting a document
    lowers the counts by itself."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="blocks")
    fingerprint = models.CharField(max_length=64)
    repeated = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["document", "fingerprint"], name="docblock_unique_fingerprint"
            )
        ]
        indexes = [models.Index(fields=["source", "fingerprint"], name="docblock_source_fp")]

    def __str__(self) -> str:
        return f"{self.document_id}:{self.fingerprint[:12]}"


class CrawlPageStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    FETCHING = "fetching", "Fetching"
    FETCHED = "fetched", "Fetched"
    SKIPPED = "skipped", "Skipped"
    FAILED = "failed", "Failed"
    INGESTED = "ingested", "Ingested"


class PageChange(models.TextChoices):
    """What the crawl's current (or last) round did to a page's document."""

    ADDED = "added", "Added"
    CHANGED = "changed", "Changed"
    UNCHANGED = "unchanged", "Unchanged"
    # Gone (404/410, or no longer in the sitemap), its document kept for the grace period.
    MISSING = "missing", "Missing"
    # Gone past the grace period: its document (and its evidence) retired.
    REMOVED = "removed", "Removed"


class CrawlPage(WorkspaceScopedModel):
    """One URL of a crawl: the persistent frontier, and the record of what happened to it.

    A crawl is the loop "take queued pages, fetch, record, discover" over these rows, so a
    crawl killed at any point continues from them without fetching finished pages again.
    Conditional-request validators (ETag, Last-Modified) and the content hash live here so a
    recrawl can tell unchanged pages without parsing anything.
    """

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="pages")
    url = models.TextField()
    url_hash = models.CharField(max_length=64)
    depth = models.PositiveIntegerField(default=0)
    via = models.CharField(
        max_length=16, default="seed", help_text="seed, link, sitemap, llms, canonical"
    )
    status = models.CharField(
        max_length=16, choices=CrawlPageStatus.choices, default=CrawlPageStatus.QUEUED
    )
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    reason = models.TextField(blank=True, help_text="Why it was skipped or failed")
    final_url = models.TextField(blank=True)
    redirects = models.JSONField(default=list, blank=True)
    content_type = models.CharField(max_length=120, blank=True)
    content_hash = models.CharField(max_length=64, blank=True)
    etag = models.CharField(max_length=500, blank=True)
    last_modified = models.CharField(max_length=100, blank=True)
    sitemap_lastmod = models.DateTimeField(null=True, blank=True)
    fetched_at = models.DateTimeField(null=True, blank=True)
    elapsed_ms = models.PositiveIntegerField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    not_before = models.DateTimeField(null=True, blank=True, help_text="Retry-After")
    document = models.ForeignKey(
        Document, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # When a page with a document was first found gone (404/410, or no longer listed in
    # sitemap mode); its document is retired once CRAWL_GONE_GRACE_SECONDS have passed and
    # it is still gone. Cleared when it answers again.
    gone_at = models.DateTimeField(null=True, blank=True)
    # What this round did to the page's document (PageChange); "" when nothing (yet).
    run_change = models.CharField(max_length=16, choices=PageChange.choices, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["source", "depth", "id"]
        constraints = [
            models.UniqueConstraint(fields=["source", "url_hash"], name="crawlpage_unique_url")
        ]
        indexes = [
            models.Index(fields=["source", "status", "depth", "id"], name="crawlpage_frontier")
        ]

    def __str__(self) -> str:
        return self.url
