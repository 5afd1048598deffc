"""The same content counts once: a document whose bytes (content hash) another document of the
workspace has already been parsed from becomes that document's duplicate.

A duplicate (`Document.duplicate_of`, status `duplicate`) has no chunks of its own: it shares
the original's chunks, and so their vectors, extraction runs, mentions and relation
evidence, which are therefore counted once however many uploads, overlapping crawls or
mirror pages carry the content (within one source too). The pipeline stops after `parse`
for it. The rules, each applied under the lock of the content involved:

- Parsing a document (ingest/stages.py `parse`) looks for an original under the
  transaction-level advisory lock of (workspace, content hash), parses without it (no
  transaction stays open for a long parse), and saves its parse under the lock after
  looking again, so of two identical documents processed at the same moment one becomes
  the original and the other its duplicate (`content_claim`).
- The original of a duplicate is never a duplicate itself: a document that becomes a
  duplicate hands its own duplicates on to its original (`do_mark_duplicate`).
- A duplicate whose content changes is detached and processed like any document; an
  original whose content changes first hands the chunks of its old content on to one of
  its duplicates, which becomes the original (`do_hand_on_duplicates`).
- An original about to be deleted does the same (`do_release_duplicates`), so deleting
  either of two identical documents or sources leaves the other intact.

Promotion moves the chunks (Chunk.document) to the heir and tells the apps built on ingest
through INGEST_CHUNK_MOVE_HOOKS (an entity's sources follow its mentions' documents).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction
from django.db.models import QuerySet

from ingest.actions.document_state import do_transition, do_transition_rows
from ingest.actions.hooks import run_deletion_hooks, run_move_hooks
from ingest.dispatch import enqueue_documents
from ingest.models import Chunk, Document, DocumentStatus, Source, SourceStatus
from ingest.parsers.dates import CONTENT_SOURCES
from ingest.parsers.text import filename_stem

# Documents in these states cannot be anybody's original: their content was not (or not
# completely) processed, or they are duplicates themselves.
_NOT_ORIGINALS = (DocumentStatus.FAILED, DocumentStatus.CANCELLED, DocumentStatus.DUPLICATE)


def _lock_key(workspace_id: int, content_hash: str) -> int:
    digest = hashlib.blake2b(f"{workspace_id}:{content_hash}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def lock_content(workspace_id: int, *content_hashes: str) -> None:
    """Take the transaction-level advisory lock of each (workspace, content hash), always in
    the same order (two callers locking several contents cannot deadlock)."""
    keys = sorted({_lock_key(workspace_id, h) for h in content_hashes if h})
    with connection.cursor() as cursor:
        for key in keys:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


def find_original(document: Document) -> Document | None:
    """The workspace's document that these bytes were parsed for first and that carries the
    chunks of them (none: this document is the original). Call it under `lock_content`."""
    content = document.content_hash
    if not content:
        return None
    return (
        Document.objects.filter(
            workspace_id=document.workspace_id,
            content_hash=content,
            processed_hash=content,
            duplicate_of__isnull=True,
        )
        .exclude(pk=document.pk)
        .exclude(status__in=_NOT_ORIGINALS)
        .exclude(source__status=SourceStatus.DELETING)
        .order_by("pk")
        .first()
    )


@contextmanager
def content_claim(document: Document) -> Iterator[Document | None]:
    """One transaction holding the lock of the document's content: yields its original, or
    None when the document is to be the original — then save its parse inside the block,
    and an identical document saving meanwhile waits and finds it."""
    with transaction.atomic():
        lock_content(document.workspace_id, document.content_hash)
        yield find_original(document)


def _copy_title(document: Document, original: Document) -> str:
    """The original's title, unless that was only its file name (then this one's)."""
    original_stem = filename_stem(original.path.rsplit("/", 1)[-1])
    if original.title and original.title != original_stem:
        return original.title
    return filename_stem(document.path.rsplit("/", 1)[-1])[:1000] or original.title


def do_mark_duplicate(*, document: Document, original: Document) -> None:
    """Make `document` a duplicate of `original` (call it inside `content_claim`): chunks of
    its own (from an earlier content) go with what was derived from them, its own
    duplicates become the original's, and it takes the original's parsed text."""
    own = list(Chunk.objects.filter(document=document).values_list("pk", flat=True))
    if own:
        run_deletion_hooks(own)
        Chunk.objects.filter(pk__in=own).delete()
    Document.objects.filter(duplicate_of=document).update(duplicate_of=original)
    document.duplicate_of = original
    document.text = original.text
    document.title = _copy_title(document, original)
    document.format, document.mime = original.format, original.mime
    document.metadata = dict(original.metadata or {})
    document.warnings = list(original.warnings or [])
    document.processed_hash = document.content_hash
    if original.published_source in CONTENT_SOURCES:
        # The date the content states is this content's too; a date only its carrier gave
        # (Last-Modified, a file's time) stays each copy's own.
        document.published_at = original.published_at
        document.published_source = original.published_source
    do_transition(
        document=document,
        to=DocumentStatus.DUPLICATE,
        error="",
        fields=(
            "duplicate_of", "text", "title", "format", "mime", "metadata", "warnings",
            "processed_hash", "published_at", "published_source",
        ),
    )  # fmt: skip


def _requeue(documents: QuerySet[Document], *, parsed: bool = False) -> None:
    """Detach and queue documents again: duplicates left without an original (`parsed`:
    a promoted one, whose chunks are of its content, so it may be an original meanwhile)."""
    ids = list(documents.values_list("pk", flat=True))
    if not ids:
        return
    do_transition_rows(
        documents=Document.objects.filter(pk__in=ids),
        from_statuses=DocumentStatus,
        to=DocumentStatus.QUEUED,
        error="",
        duplicate_of=None,
    )
    if not parsed:
        Document.objects.filter(pk__in=ids).update(processed_hash="")
    Source.objects.filter(
        pk__in=Document.objects.filter(pk__in=ids).values("source_id"),
        status__in=[SourceStatus.DONE, SourceStatus.FAILED],
    ).update(status=SourceStatus.RUNNING, error="", finished_at=None)
    enqueue_documents(ids)


def _promote(original: Document, candidates: QuerySet[Document], content: str) -> Document | None:
    """The first of `candidates` duplicating the original with `content` (the content its
    chunks were made from) takes the chunks over and becomes the original, of the other
    duplicates too; None when there is no such duplicate. Call it holding the lock of
    that content."""
    heir = (
        candidates.filter(
            duplicate_of=original, status=DocumentStatus.DUPLICATE, content_hash=content
        )
        .exclude(source__status=SourceStatus.DELETING)
        .order_by("pk")
        .first()
    )
    if heir is None:
        return None
    moved = list(Chunk.objects.filter(document=original).values_list("pk", flat=True))
    Chunk.objects.filter(pk__in=moved).update(document=heir)
    Document.objects.filter(duplicate_of=original, content_hash=heir.content_hash).exclude(
        pk=heir.pk
    ).update(duplicate_of=heir)
    # Chunks of fully processed content need nothing more; anything else (the original was
    # still on its way, failed, or is being re-processed) is taken to the end by the heir.
    finished = (
        original.status == DocumentStatus.DONE
        and original.processed_hash == content == original.content_hash
    )
    heir.duplicate_of = None
    heir.text = original.text
    heir.format, heir.mime = original.format, original.mime
    heir.metadata = dict(original.metadata or {})
    heir.warnings = list(original.warnings or [])
    do_transition(
        document=heir,
        to=DocumentStatus.DONE if finished else DocumentStatus.QUEUED,
        error="",
        fields=("duplicate_of", "text", "format", "mime", "metadata", "warnings"),
    )
    run_move_hooks(moved)
    if not finished:
        _requeue(Document.objects.filter(pk=heir.pk), parsed=True)
    return heir


def do_hand_on_duplicates(*, document: Document) -> Document | None:
    """Before a document whose content changed is parsed again: its duplicates of the old
    content keep that content's chunks (one of them becomes their original) instead of
    losing them when the document is re-chunked. Returns that new original, if any."""
    stale = Document.objects.filter(duplicate_of=document).exclude(
        content_hash=document.content_hash
    )
    hashes = set(stale.values_list("content_hash", flat=True))
    if not hashes:
        return None
    with transaction.atomic():
        lock_content(document.workspace_id, *hashes)
        original = Document.objects.select_for_update().get(pk=document.pk)
        # The chunks are of the content it was last parsed from (its duplicates' content).
        content = original.processed_hash if original.processed_hash in hashes else ""
        if not content:
            first = stale.filter(status=DocumentStatus.DUPLICATE).order_by("pk").first()
            content = first.content_hash if first is not None else ""
        heir = _promote(original, Document.objects.all(), content) if content else None
        # Anything still pointing at the document had other content: it processes itself.
        _requeue(stale)
    return heir


def do_release_duplicates(*, documents: QuerySet[Document]) -> set[int]:
    """Before `documents` are deleted: each one that is the original of duplicates outside
    them hands its chunks, and so everything derived from them, to one of those, which
    becomes the original. Call it inside the deleting transaction when new duplicates of
    these documents could still appear meanwhile. Returns the promoted documents' source
    ids (their counters changed)."""
    sources: set[int] = set()
    outside = Document.objects.exclude(pk__in=documents.values("pk"))
    originals = documents.filter(duplicates__isnull=False).values_list("pk", flat=True)
    for pk in sorted(set(originals)):
        with transaction.atomic():
            found = (
                Document.objects.filter(pk=pk)
                .only("workspace_id", "content_hash", "processed_hash")
                .first()
            )
            if found is None:
                continue
            lock_content(found.workspace_id, found.content_hash, found.processed_hash)
            original = Document.objects.select_for_update().get(pk=pk)
            content = original.processed_hash or original.content_hash
            heir = _promote(original, outside, content)
            if heir is not None:
                sources.add(heir.source_id)
            # Duplicates of other content, or in sources being deleted, have no chunks
            # to take over: those that stay process themselves.
            _requeue(
                outside.filter(duplicate_of=original).exclude(source__status=SourceStatus.DELETING)
            )
    return sources
