"""Create sources, add files and text, start, cancel, retry, re-ingest and delete them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from ingest import blobs
from ingest.actions.boilerplate import boilerplate_counters, do_requeue_stale_documents
from ingest.actions.document_state import do_transition, do_transition_rows
from ingest.actions.duplicates import do_release_duplicates, lock_content
from ingest.actions.hooks import run_deletion_hooks  # callers import it from here too
from ingest.dispatch import enqueue_documents
from ingest.models import (
    PENDING,
    Chunk,
    CrawlPage,
    CrawlPageStatus,
    Document,
    DocumentStatus,
    PageChange,
    PublishedSource,
    Source,
    SourceKind,
    SourceStatus,
)
from ingest.parsers.dates import from_timestamp, parse_date, sane
from system.enqueue import enqueue_on_commit
from workspaces.errors import Conflict, InvalidInput
from workspaces.models import Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@transaction.atomic
def do_create_source(
    *,
    workspace: Workspace,
    kind: str,
    name: str,
    origin: str = "",
    tags: Iterable[str] = (),
    settings: dict[str, object] | None = None,
    created_by: User | None = None,
) -> Source:
    if kind not in SourceKind.values:
        raise InvalidInput(
            f"Unknown source kind {kind!r}; choose one of {', '.join(SourceKind.values)}."
        )
    name = name.strip()[:300] or f"{kind} {timezone.now():%Y-%m-%d %H:%M}"
    clean_tags = sorted({t.strip()[:50] for t in tags if t and t.strip()})
    return Source.objects.create(
        workspace=workspace,
        kind=kind,
        name=name,
        origin=origin[:2000],
        tags=clean_tags,
        settings=settings or {},
        created_by=created_by,
    )


# Source settings read by later pipeline stages (extraction), validated here so every way
# of creating a source accepts the same ones.
SOURCE_OPTIONS = ("known_only", "token_budget", "topic")
# The longest topic a source may carry (words or a description; embedded like a question).
MAX_TOPIC_CHARS = 1000


def validate_source_options(
    *, known_only: object = None, token_budget: object = None, topic: object = None
) -> dict[str, object]:
    """`known_only`: extraction may add evidence for existing entities but never creates
    new ones. `token_budget`: LLM tokens this source may spend (0 or None: the default).
    `topic`: what the source is about, in words or a sentence; documents not about it are
    kept but not extracted (knowledge/extraction/relevance.py); "" removes it, None leaves
    it as it is."""
    options: dict[str, object] = {}
    if topic is not None:
        if not isinstance(topic, str):
            raise InvalidInput("topic: expected words or a short description.")
        cleaned = " ".join("".join(ch if ch.isprintable() else " " for ch in topic).split())
        if len(cleaned) > MAX_TOPIC_CHARS:
            raise InvalidInput(f"topic: at most {MAX_TOPIC_CHARS} characters.")
        options["topic"] = cleaned
    if known_only is not None:
        if not isinstance(known_only, bool):
            raise InvalidInput("known_only: expected true or false.")
        options["known_only"] = known_only
    if token_budget is not None:
        if isinstance(token_budget, bool) or not isinstance(token_budget, int) or token_budget < 0:
            raise InvalidInput("token_budget: expected a whole number of tokens, 0 or more.")
        options["token_budget"] = token_budget
    return options


def validate_modified_times(*, names: list[str], values: list[str]) -> dict[str, datetime]:
    """Uploaded files' modification times by file name, from one value per file in the
    files' order (`last_modified`, as a browser's File.lastModified gives it: milliseconds
    since 1970, or an ISO 8601 date-time); no values: none. A blank value, or a date that
    is not sane (before 1970-01-02 or more than a day ahead), leaves its file without one;
    a malformed value or a count that is not the files' is an error."""
    values = [v.strip() for raw in values for v in raw.split(",")]
    if not any(values):
        return {}
    if len(values) != len(names):
        raise InvalidInput(
            f"last_modified: one value per file, in the files' order ({len(names)} files, "
            f"{len(values)} values)."
        )
    times: dict[str, datetime] = {}
    for name, value in zip(names, values, strict=True):
        if not value:
            continue
        if value.isascii() and value.lstrip("-").isdigit() and len(value) <= 16:
            moment = from_timestamp(int(value) / 1000)
        else:
            try:
                datetime.fromisoformat(value[:64])
            except ValueError:
                raise InvalidInput(
                    f"last_modified: {value[:40]!r} is neither milliseconds since 1970 nor "
                    "an ISO 8601 date-time."
                ) from None
            moment = parse_date(value)
        if moment is not None:
            times[name] = moment
    return times


@transaction.atomic
def do_set_source_options(*, source: Source, options: dict[str, object]) -> Source:
    """Change a source's options (see validate_source_options); takes effect for the
    documents processed or extracted from now on."""
    source = Source.objects.select_for_update().get(pk=source.pk)
    source.settings = {**(source.settings or {}), **options}
    source.save(update_fields=["settings"])
    return source


@dataclass(frozen=True, slots=True)
class AddedDocument:
    document: Document
    changed: bool  # False: same path, same bytes, already processed — nothing to do
    created: bool = False  # a new document at that path (not a new version of one)


def do_add_file(
    *,
    source: Source,
    path: str,
    chunks: Iterable[bytes],
    modified_at: datetime | None = None,
    modified_source: str = PublishedSource.FILE,
    needs_javascript: bool | None = None,
    rendered: bool = False,
) -> AddedDocument:
    """Store a file's bytes and create or update the source's document at `path`.

    Same path with identical bytes that were processed already: nothing changes and no work
    is queued. Changed bytes: the document is queued again and re-processed through the
    delta path (unchanged chunks kept).

    `modified_at` is the date what carried the file gives it (`modified_source`: "file" for
    an upload's modification time, "http" for a crawled page's Last-Modified): new bytes
    take it as their document's own date (or none, when it is missing or not sane), until
    parsing finds a date the content states itself (ingest/stages.py).

    `needs_javascript` (a crawled page's verdict, ingest/crawler/javascript.py; None: not
    judged) and `rendered` (the bytes are the DOM Chromium rendered) are recorded with new
    bytes.
    """
    if source.status == SourceStatus.DELETING:
        raise Conflict("This source is being deleted.")
    path = path.strip().replace("\\", "/")[:2000]
    if not path:
        raise InvalidInput("A document needs a file name.")
    blob = blobs.store_blob(workspace_id=source.workspace_id, chunks=chunks)
    with transaction.atomic():
        document, created = Document.objects.select_for_update().get_or_create(
            workspace_id=source.workspace_id,
            source=source,
            path=path,
            defaults={"blob": blob.name, "content_hash": blob.sha256, "size": blob.size},
        )
        if (
            not created
            and document.content_hash == blob.sha256
            and document.status != DocumentStatus.FAILED
        ):
            return AddedDocument(document=document, changed=False)
        if document.content_hash != blob.sha256:
            # Other content: no longer anybody's duplicate (ingest/actions/duplicates.py).
            document.duplicate_of = None
        document.blob, document.content_hash, document.size = blob.name, blob.sha256, blob.size
        document.published_at = sane(modified_at)
        document.published_source = modified_source if document.published_at else ""
        judged = () if needs_javascript is None else ("needs_javascript", "rendered")
        if needs_javascript is not None:
            document.needs_javascript, document.rendered = needs_javascript, rendered
        do_transition(
            document=document,
            to=DocumentStatus.QUEUED,
            error="",
            fields=(
                "blob", "content_hash", "size", "duplicate_of", "published_at",
                "published_source", *judged,
            ),
        )  # fmt: skip
    return AddedDocument(document=document, changed=True, created=created)


def do_add_text(*, source: Source, title: str, text: str) -> AddedDocument:
    """A text document, stored like an uploaded Markdown file so it takes the same path."""
    if not text.strip():
        raise InvalidInput("The text is empty.")
    safe_title = "".join(ch if ch.isalnum() or ch in "-_ ." else "_" for ch in (title or "text"))
    return do_add_file(
        source=source, path=f"{safe_title.strip()[:200] or 'text'}.md", chunks=[text.encode()]
    )


FileInput = tuple[str, Iterable[bytes]]  # (document path, the file's bytes in blocks)


@transaction.atomic
def do_add_files(
    *,
    source: Source,
    files: Iterable[FileInput],
    enqueue: bool = True,
    modified: Mapping[str, datetime] | None = None,
) -> list[AddedDocument]:
    """Add (or replace) files in an upload source and queue whatever changed. `modified`
    gives files their modification times, by document path (see do_add_file)."""
    if source.kind != SourceKind.UPLOAD:
        raise InvalidInput("Files can only be added to upload sources.")
    dates = modified or {}
    added = [
        do_add_file(source=source, path=path, chunks=blocks, modified_at=dates.get(path))
        for path, blocks in files
    ]
    do_start_source(source=source, enqueue=enqueue)
    return added


@transaction.atomic
def do_create_upload_source(
    *,
    workspace: Workspace,
    files: list[FileInput],
    name: str = "",
    origin: str = "upload",
    tags: Iterable[str] = (),
    created_by: User | None = None,
    enqueue: bool = True,
    options: dict[str, object] | None = None,
    modified: Mapping[str, datetime] | None = None,
) -> tuple[Source, list[AddedDocument]]:
    """A new upload source holding `files`, queued for processing (on commit); `modified`
    gives files their modification times, by document path."""
    source = do_create_source(
        workspace=workspace,
        kind=SourceKind.UPLOAD,
        name=name or ", ".join(path.rsplit("/", 1)[-1] for path, _ in files)[:300],
        origin=origin,
        tags=tags,
        settings=options,
        created_by=created_by,
    )
    return source, do_add_files(source=source, files=files, enqueue=enqueue, modified=modified)


@transaction.atomic
def do_create_text_source(
    *,
    workspace: Workspace,
    title: str,
    text: str,
    name: str = "",
    tags: Iterable[str] = (),
    created_by: User | None = None,
    options: dict[str, object] | None = None,
    origin: str = "api",
) -> tuple[Source, AddedDocument]:
    """A new source of one pasted text, queued for processing (on commit); `origin` says
    where it was pasted: "api" unless told, "paste" from the sources page's form."""
    source = do_create_source(
        workspace=workspace,
        kind=SourceKind.TEXT,
        name=name or title,
        origin=origin,
        tags=tags,
        settings=options,
        created_by=created_by,
    )
    added = do_add_text(source=source, title=title, text=text)
    do_start_source(source=source)
    return source, added


@transaction.atomic
def do_start_source(*, source: Source, enqueue: bool = True) -> int:
    """Queue every document that still needs work; returns how many. Finishes at once when
    nothing needs work (identical re-upload)."""
    source = Source.objects.select_for_update().get(pk=source.pk)
    if source.status == SourceStatus.DELETING:
        raise Conflict("This source is being deleted.")
    pending = list(
        Document.objects.filter(source=source, status__in=PENDING).values_list("pk", flat=True)
    )
    source.status = SourceStatus.RUNNING if pending else source.status
    source.error = ""
    source.started_at = source.started_at or timezone.now()
    source.finished_at = None if pending else source.finished_at
    source.save(update_fields=["status", "error", "started_at", "finished_at"])
    if enqueue:
        enqueue_documents(pending)
    do_refresh_source_progress(source_id=source.pk)
    return len(pending)


@transaction.atomic
def do_cancel_source(*, source: Source) -> Source:
    """Stop further work: queued documents are cancelled, a running one stops after its stage."""
    source = Source.objects.select_for_update().get(pk=source.pk)
    if source.status in {SourceStatus.DONE, SourceStatus.FAILED, SourceStatus.DELETING}:
        raise Conflict(f"The source is {source.status}; there is nothing to cancel.")
    do_transition_rows(
        documents=Document.objects.filter(source=source),
        from_statuses=PENDING,
        to=DocumentStatus.CANCELLED,
    )
    source.status = SourceStatus.CANCELLED
    source.finished_at = timezone.now()
    source.save(update_fields=["status", "finished_at"])
    do_refresh_source_progress(source_id=source.pk)
    return source


@transaction.atomic
def do_retry_source(*, source: Source, enqueue: bool = True) -> int:
    """Re-run only failed (and cancelled) documents; returns how many were queued."""
    retried = do_transition_rows(
        documents=Document.objects.filter(source=source),
        from_statuses=[DocumentStatus.FAILED, DocumentStatus.CANCELLED],
        to=DocumentStatus.QUEUED,
        error="",
        processed_hash="",
    )
    Source.objects.filter(pk=source.pk).update(status=SourceStatus.QUEUED)
    source.refresh_from_db()
    do_start_source(source=source, enqueue=enqueue)
    return retried


@transaction.atomic
def do_reingest_source(*, source: Source, enqueue: bool = True) -> int:
    """Run the source again: documents whose bytes changed since they were processed, or
    that are not done, are queued; unchanged documents (duplicates among them) do no work
    at all."""
    settled = [DocumentStatus.DONE, DocumentStatus.DUPLICATE]
    do_transition_rows(
        documents=Document.objects.filter(source=source),
        from_statuses=[status for status in DocumentStatus if status not in settled],
        to=DocumentStatus.QUEUED,
        error="",
    )
    do_transition_rows(
        documents=Document.objects.filter(source=source).exclude(processed_hash=F("content_hash")),
        from_statuses=settled,
        to=DocumentStatus.QUEUED,
    )
    Source.objects.filter(pk=source.pk).update(status=SourceStatus.QUEUED)
    source.refresh_from_db()
    return do_start_source(source=source, enqueue=enqueue)


@transaction.atomic
def do_request_source_deletion(*, source: Source) -> Source:
    """Mark for deletion and hand the (possibly long) deletion to the worker."""
    source = Source.objects.select_for_update().get(pk=source.pk)
    source.status = SourceStatus.DELETING
    source.save(update_fields=["status"])
    enqueue_on_commit("ingest.tasks.delete_source", source.pk)
    return source


def do_delete_source(*, source_id: int, batch_size: int = 2000) -> bool:
    """Delete a source with its documents, chunks and everything derived from them, in
    batches (each its own transaction) so a huge source never holds one giant lock.
    A document whose content another source duplicates hands its chunks (and the graph
    built from them) to that duplicate first. Blobs no other document uses are removed.
    Returns False if it was gone already."""
    source = Source.objects.filter(pk=source_id).first()
    if source is None:
        return False
    for heir_source_id in do_release_duplicates(
        documents=Document.objects.filter(source_id=source_id)
    ):
        do_refresh_source_progress(source_id=heir_source_id)
    while True:
        with transaction.atomic():
            ids = list(
                Chunk.objects.filter(document__source_id=source_id).values_list("pk", flat=True)[
                    :batch_size
                ]
            )
            if not ids:
                break
            run_deletion_hooks(ids)
            Chunk.objects.filter(pk__in=ids).delete()
    blob_names = set(Document.objects.filter(source_id=source_id).values_list("blob", flat=True))
    with transaction.atomic():
        Document.objects.filter(source_id=source_id).delete()
        Source.objects.filter(pk=source_id).delete()
        still_used = set(
            Document.objects.filter(
                workspace_id=source.workspace_id, blob__in=blob_names
            ).values_list("blob", flat=True)
        )
    blobs.delete_blobs(blob_names - still_used)
    return True


def do_delete_document(*, document: Document) -> None:
    """Delete one document (a page gone from its site) with its chunks and what was derived
    from them, unless a duplicate of it takes them over (ingest/actions/duplicates.py)."""
    with transaction.atomic():
        # Held to the end: no new duplicate of it can appear between promotion and delete.
        lock_content(document.workspace_id, document.content_hash, document.processed_hash)
        heirs = do_release_duplicates(documents=Document.objects.filter(pk=document.pk))
        run_deletion_hooks(
            list(Chunk.objects.filter(document_id=document.pk).values_list("pk", flat=True))
        )
        Document.objects.filter(pk=document.pk).delete()
    for source_id in heirs:
        do_refresh_source_progress(source_id=source_id)


def do_refresh_source_progress(*, source_id: int) -> Source | None:
    """Recompute the source's counters from its documents and chunks (never drift), and
    finish it when no document is left to process."""
    with transaction.atomic():
        source = Source.objects.select_for_update().filter(pk=source_id).first()
        if source is None:
            return None
        docs = Document.objects.filter(source_id=source_id).aggregate(
            documents=Count("pk"),
            done=Count("pk", filter=Q(status=DocumentStatus.DONE)),
            failed=Count("pk", filter=Q(status=DocumentStatus.FAILED)),
            cancelled=Count("pk", filter=Q(status=DocumentStatus.CANCELLED)),
            duplicates=Count("pk", filter=Q(status=DocumentStatus.DUPLICATE)),
            pending=Count("pk", filter=Q(status__in=PENDING)),
            # Kept but not extracted: not about the source's topic (knowledge's filter).
            off_topic=Count("pk", filter=Q(off_topic=True)),
            # Crawled pages that seem to need JavaScript (ingest/crawler/javascript.py).
            needs_javascript=Count("pk", filter=Q(needs_javascript=True)),
        )
        chunks = Chunk.objects.filter(document__source_id=source_id).aggregate(
            chunks=Count("pk"), embedded=Count("pk", filter=Q(embedding__isnull=False))
        )
        pages = _page_counters(source) if source.is_crawl else {}
        crawling = pages.get("pages_queued", 0) > 0
        if docs["pending"] == 0 and not crawling:
            # Nothing in flight: documents chunked before some text was known to repeat
            # (or after it stopped repeating) go round again (ingest/actions/boilerplate.py).
            requeued = do_requeue_stale_documents(source=source)
            docs["pending"] += requeued
            docs["done"] -= requeued
        source.counters = {**docs, **chunks, **boilerplate_counters(source_id), **pages}
        fields = ["counters"]
        if docs["pending"] == 0 and not crawling and source.is_active:
            all_failed = (docs["documents"] > 0 and docs["failed"] == docs["documents"]) or (
                source.is_crawl and docs["documents"] == 0 and pages.get("pages_failed", 0) > 0
            )
            source.status = SourceStatus.FAILED if all_failed else SourceStatus.DONE
            source.error = "Every document failed; see their errors." if all_failed else ""
            source.stage = "done"
            source.finished_at = timezone.now()
            fields += ["status", "error", "stage", "finished_at"]
            if source.refresh_every:
                # Scheduled re-crawls count from the end of the last run, whoever started it.
                source.next_run_at = source.finished_at + timedelta(seconds=source.refresh_every)
                fields.append("next_run_at")
        if source.is_crawl and not source.is_active:
            source.last_run = _last_run(source, pages)
            fields.append("last_run")
        source.save(update_fields=fields)
    return source


def _last_run(source: Source, pages: dict[str, int]) -> dict[str, object]:
    """The crawl's last round as its pages recorded it (CrawlPage.run_change): read again
    while the source is finished, kept as it was while the next round runs."""
    settings = source.settings or {}
    return {
        "round": int(settings.get("round", 1)),
        "scheduled": bool(settings.get("scheduled", False)),
        "status": str(source.status),
        "started_at": source.started_at.isoformat() if source.started_at else None,
        "finished_at": source.finished_at.isoformat() if source.finished_at else None,
        **{change: pages.get(f"pages_{change}", 0) for change in PageChange.values},
    }


def _page_counters(source: Source) -> dict[str, int]:
    """Crawl progress from the frontier rows: discovered, fetched, skipped (by robots.txt and
    otherwise), failed, ingested, and still queued; and what the round did to the pages'
    documents: added, changed, unchanged, missing (gone, kept for the grace period),
    removed."""
    counts = CrawlPage.objects.filter(source=source).aggregate(
        discovered=Count("pk"),
        fetched=Count("pk", filter=Q(http_status__isnull=False)),
        skipped_robots=Count(
            "pk", filter=Q(status=CrawlPageStatus.SKIPPED, reason="disallowed by robots.txt")
        ),
        skipped=Count("pk", filter=Q(status=CrawlPageStatus.SKIPPED)),
        failed=Count("pk", filter=Q(status=CrawlPageStatus.FAILED)),
        ingested=Count("pk", filter=Q(status=CrawlPageStatus.INGESTED)),
        queued=Count("pk", filter=Q(status__in=[CrawlPageStatus.QUEUED, CrawlPageStatus.FETCHING])),
        # What this round did to the pages' documents (ingest/actions/crawl/).
        **{change: Count("pk", filter=Q(run_change=change)) for change in PageChange.values},
    )
    return {f"pages_{key}": value for key, value in counts.items()}
