"""Keep each source's boilerplate known while its documents come and go.

The engine (ingest/boilerplate.py) fingerprints a text's lines and, given the fingerprints
that repeat, says which spans are boilerplate. Here each document's fingerprints are
recorded for its source (`DocumentBlock`, one row per distinct line), and a fingerprint
repeats once at least BOILERPLATE_MIN_DOCUMENTS documents of the source hold it (a duplicate
document holds nothing of its own: it shares its original's chunks).

The order of a crawl is the difficulty: the first pages are chunked before anything is
known to repeat. Each row records the answer its document was chunked with (`repeated`);
when a fingerprint's count crosses the threshold, up or down, the rows of the other
documents holding it disagree with the new answer. Those whose boilerplate spans the new
answer changes are chunked again through the pipeline (status back to `parsed`, queued like
any document): their content chunks are cut anew without the boilerplate, so extraction
writes the new windows and the evidence of the old ones goes (stale chunks through the
deletion hooks, runs the document no longer uses by the materializer). The others (a
repeated heading or label makes no span by itself) only take the new answer on their rows.
Two places look for such documents:

- `do_record_blocks`, as a document is chunked: the documents holding a fingerprint whose
  count this document just moved, if they are settled (done);
- `do_requeue_stale_documents`, when the source has nothing pending (called by the progress
  refresh): every disagreeing document, which catches the ones that were still in the
  pipeline at the moment of the crossing (they cannot be re-queued while a worker holds
  them: the pipeline's last step would mark them done over it) and deletions (a deleted
  document's rows go with it, so counts fall by themselves).

Counters for the source page and the API (`boilerplate_counters`): boilerplate chunks, their
characters, and the characters of chunked text they are a share of.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from ingest import boilerplate
from ingest.actions.document_state import do_transition_rows
from ingest.dispatch import enqueue_documents
from ingest.models import Document, DocumentBlock, DocumentStatus, Source, SourceStatus

_BATCH = 2000


def _lock_source(source_id: int) -> None:
    """The transaction-level advisory lock of a source's block counts: two documents of one
    source recorded at the same time each see the other's rows."""
    digest = hashlib.blake2b(f"boilerplate:{source_id}".encode(), digest_size=8).digest()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(%s)", [int.from_bytes(digest, "big", signed=True)]
        )


def repeated_fingerprints(source_id: int, fingerprints: Iterable[str]) -> set[str]:
    """Those of `fingerprints` held by at least BOILERPLATE_MIN_DOCUMENTS documents of the
    source (duplicates aside). Counts at most that many rows per fingerprint: a menu line on
    every page of a 10,000-page site costs what a line on three pages does."""
    wanted = sorted(set(fingerprints))
    threshold = settings.BOILERPLATE_MIN_DOCUMENTS
    if not wanted or threshold <= 0:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT f.fingerprint FROM unnest(%s::varchar[]) AS f(fingerprint)
            WHERE (SELECT count(*) FROM (
                       SELECT 1 FROM {DocumentBlock._meta.db_table} b
                       JOIN {Document._meta.db_table} d ON d.id = b.document_id
                       WHERE b.source_id = %s AND b.fingerprint = f.fingerprint
                         AND d.status <> %s
                       LIMIT %s) AS held) >= %s
            """,  # noqa: S608 (table names are ours; values are parameters)
            [wanted, source_id, DocumentStatus.DUPLICATE, threshold, threshold],
        )
        return {row[0] for row in cursor.fetchall()}


def do_record_blocks(*, document: Document, fingerprints: set[str]) -> frozenset[str]:
    """Record the fingerprints of the document's text for its source, replacing those of
    its previous text, and return the ones that repeat now (its chunks are to be cut with
    this answer). Settled documents of the source that were cut with another answer for a
    fingerprint whose count this moved are queued to be chunked again."""
    if settings.BOILERPLATE_MIN_DOCUMENTS <= 0:
        DocumentBlock.objects.filter(document=document).delete()
        return frozenset()
    with transaction.atomic():
        _lock_source(document.source_id)
        held = set(
            DocumentBlock.objects.filter(document=document).values_list("fingerprint", flat=True)
        )
        gone, new = held - fingerprints, fingerprints - held
        if gone:
            DocumentBlock.objects.filter(document=document, fingerprint__in=gone).delete()
        DocumentBlock.objects.bulk_create(
            [
                DocumentBlock(
                    workspace_id=document.workspace_id,
                    source_id=document.source_id,
                    document=document,
                    fingerprint=value,
                )
                for value in sorted(new)
            ],
            batch_size=_BATCH,
        )
        moved = gone | new
        answer = repeated_fingerprints(document.source_id, fingerprints | gone)
        repeated = frozenset(answer & fingerprints)
        _record_answer(document, repeated)
        if moved:
            up, down = moved & answer, moved - answer
            stale = (
                DocumentBlock.objects.filter(source_id=document.source_id)
                .filter(
                    Q(fingerprint__in=up, repeated=False) | Q(fingerprint__in=down, repeated=True)
                )
                .exclude(document=document)
                .values_list("document_id", flat=True)
                .distinct()
            )
            _requeue(document.source_id, set(stale))
    return repeated


def do_requeue_stale_documents(*, source: Source) -> int:
    """Queue every settled document of the source whose chunks were cut with an answer the
    counts no longer give (see the module docstring); returns how many. Meant for when
    nothing of the source is pending: a full pass over its rows."""
    threshold = settings.BOILERPLATE_MIN_DOCUMENTS
    if source.status in {SourceStatus.CANCELLED, SourceStatus.DELETING}:
        return 0
    blocks, documents = DocumentBlock._meta.db_table, Document._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH counted AS (
                SELECT b.fingerprint, count(*) >= %s AND %s > 0 AS repeated
                FROM {blocks} b JOIN {documents} d ON d.id = b.document_id
                WHERE b.source_id = %s AND d.status <> %s
                GROUP BY b.fingerprint
            )
            SELECT DISTINCT b.document_id
            FROM {blocks} b
            JOIN counted c ON c.fingerprint = b.fingerprint
            JOIN {documents} d ON d.id = b.document_id
            WHERE b.source_id = %s AND d.status = %s AND b.repeated <> c.repeated
            """,  # noqa: S608 (table names are ours; values are parameters)
            [
                threshold, threshold, source.pk, DocumentStatus.DUPLICATE,
                source.pk, DocumentStatus.DONE,
            ],
        )  # fmt: skip
        stale = {row[0] for row in cursor.fetchall()}
    requeued = _requeue(source.pk, stale)
    if requeued and source.is_finished:
        source.status = SourceStatus.RUNNING
        source.finished_at = None
        source.save(update_fields=["status", "finished_at"])
    return len(requeued)


def _requeue(source_id: int, document_ids: set[int]) -> list[int]:
    """Send the done ones of these documents whose boilerplate the new counts change back
    to chunking (their parse stands), queued after commit; returns those. Documents still in
    the pipeline are left to the pass at the end."""
    if not document_ids:
        return []
    with transaction.atomic():
        _lock_source(source_id)
        settled = (
            Document.objects.select_for_update()
            .filter(pk__in=document_ids, source_id=source_id, status=DocumentStatus.DONE)
            .order_by("pk")
            .only("pk", "source_id", "text")
        )
        ids = [document.pk for document in settled if _cut_differently(document)]
        do_transition_rows(
            documents=Document.objects.filter(pk__in=ids),
            from_statuses=[DocumentStatus.DONE],
            to=DocumentStatus.PARSED,
            updated_at=timezone.now(),
        )
        enqueue_documents(ids)
    return ids


def _cut_differently(document: Document) -> bool:
    """Whether the source's counts now give the document other boilerplate spans than the
    answer it was chunked with. Most crossings do not: a heading or a lone label ("See
    also", "Section 0.0") repeats across a manual's pages without ever making a span, and
    chunking every page holding one again would cut the same chunks. Such a document only
    takes the new answer on its rows, so the pass at the end does not find it again."""
    rows = dict(
        DocumentBlock.objects.filter(document=document).values_list("fingerprint", "repeated")
    )
    then = {value for value, repeated in rows.items() if repeated}
    now = repeated_fingerprints(document.source_id, rows)
    text_lines = boilerplate.lines(document.text)
    min_chars = settings.BOILERPLATE_MIN_CHARS
    if boilerplate.boilerplate_spans(
        text_lines, then, min_chars=min_chars
    ) != boilerplate.boilerplate_spans(text_lines, now, min_chars=min_chars):
        return True
    _record_answer(document, now)
    return False


def _record_answer(document: Document, repeated: Collection[str]) -> None:
    """Mark the document's block rows with the answer its chunks are cut with: these
    fingerprints repeat, the others do not."""
    rows = DocumentBlock.objects.filter(document=document)
    rows.filter(fingerprint__in=repeated, repeated=False).update(repeated=True)
    rows.exclude(fingerprint__in=repeated).filter(repeated=True).update(repeated=False)


def boilerplate_counters(source_id: int) -> dict[str, int]:
    """`boilerplate_chunks` and `boilerplate_chars` (the text they hold) of the source's
    documents, and `text_chars`, the characters of their chunked text (each document up to
    the end of its last chunk), which the share is of."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT coalesce(sum(chunks), 0), coalesce(sum(chars), 0), coalesce(sum(text), 0)
            FROM (SELECT count(*) FILTER (WHERE c.boilerplate) AS chunks,
                         sum(c.char_end - c.char_start) FILTER (WHERE c.boilerplate) AS chars,
                         max(c.char_end) AS text
                  FROM ingest_chunk c JOIN ingest_document d ON d.id = c.document_id
                  WHERE d.source_id = %s
                  GROUP BY c.document_id) AS per_document
            """,
            [source_id],
        )
        chunks, chars, text = cursor.fetchone()
    return {
        "boilerplate_chunks": int(chunks),
        "boilerplate_chars": int(chars),
        "text_chars": int(text),
    }
