"""Run documents through the pipeline stages named in INGEST_PIPELINE_STAGES.

Documents are processed a few at a time (INGEST_DOCUMENTS_PER_TASK): each goes through its
stages on its own, except that the chunks of the whole group are embedded in one call.
Why: the model pads every batch to its longest text, and sorting a few hundred chunks by
length before batching them costs measurably less than a document's twenty at a time.
Resumability is unchanged: every document's progress is its own status.

Any stage may do the same: a stage function with a `prepare_group` attribute (set with
`ingest.stages.group_prepared`) has `prepare_group(document_ids=...)` called once for the
group after every document has reached it, before the documents go through it one by one.
Extraction uses it to send the windows of a whole group to the LLM concurrently, and only
then (`group_prepared(..., wanted=...)`): the offline extractor gains nothing from waiting
for the whole group, and each document it extracts while the next ones are embedded
overlaps the two.

A `prepare_each` attribute (`group_prepared(..., each=...)`) is called with `document_id`
as each document reaches the stage, before the next one is brought there: embedding uses it
to start on a document's chunks on a background thread while the next is parsed and chunked
(ingest/embedding_lane.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings

from ingest.actions.sources import do_refresh_source_progress
from ingest.models import PENDING, Document, DocumentStatus, Source
from ingest.parsers.base import ParseError
from ingest.selectors import source_is_stopped
from system.loading import import_paths

logger = logging.getLogger(__name__)

Stage = Callable[..., None]


def pipeline_stages() -> tuple[tuple[str, Stage], ...]:
    """(name, callable) of each configured stage, imported once, lazily (like middleware)."""
    paths = settings.INGEST_PIPELINE_STAGES
    return tuple(zip((p.rsplit(".", 1)[-1] for p in paths), import_paths(paths), strict=True))


# A document in one of these states has no stage ahead of it until someone queues it again.
SETTLED = frozenset(
    {
        DocumentStatus.DONE,
        DocumentStatus.FAILED,
        DocumentStatus.CANCELLED,
        DocumentStatus.DUPLICATE,
    }
)


class StageFailed(Exception):
    """A stage cannot finish this document; the message is for the person who added it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def do_process_documents(*, document_ids: list[int]) -> list[str]:
    """Process a group of documents, letting stages that want it prepare the whole group at
    once (embedding, extraction); returns each document's status."""
    if len(document_ids) > 1:
        for name, stage in pipeline_stages():
            prepare_group = getattr(stage, "prepare_group", None)
            wanted = getattr(stage, "group_wanted", None)
            if prepare_group is None or (wanted is not None and not wanted()):
                continue
            prepare_each = getattr(stage, "prepare_each", None)
            for document_id in document_ids:
                do_process_document(document_id=document_id, stop_before=name, refresh=False)
                if prepare_each is not None:
                    prepare_each(document_id=document_id)
            prepare_group(document_ids=document_ids)
    statuses = [
        do_process_document(document_id=document_id, refresh=False) for document_id in document_ids
    ]
    # Counters are recomputed from all rows of a source: once per group, not per document.
    for source_id in set(
        Document.objects.filter(pk__in=document_ids).values_list("source_id", flat=True)
    ):
        do_refresh_source_progress(source_id=source_id)
    return statuses


def do_process_document(
    *, document_id: int, stop_before: str | None = None, refresh: bool = True
) -> str:
    """Take one document as far as it can go; returns its final status.

    Safe to run again at any time (a retry, a resumed task after a worker was killed, two
    workers racing): every stage skips what is done. A document of a cancelled or deleted
    source is left alone; a file the parsers refuse fails with the parser's message; an
    unexpected error fails the document (logged), never the worker; a document found to
    duplicate content processed already stops after parsing. With `stop_before`,
    the stages from that one on are left for a later call; without `refresh`, the source's
    counters are left for the caller to recompute.
    """
    document = Document.objects.select_related("source").filter(pk=document_id).first()
    if document is None:
        return "missing"
    if document.status in SETTLED:
        if refresh:
            do_refresh_source_progress(source_id=document.source_id)
        return str(document.status)
    stage_name = ""
    try:
        for stage_name, stage in pipeline_stages():
            if stage_name == stop_before:
                return str(document.status)
            if source_is_stopped(document.source_id):
                Document.objects.filter(pk=document.pk, status__in=PENDING).update(
                    status=DocumentStatus.CANCELLED
                )
                return "cancelled"
            Source.objects.filter(pk=document.source_id).update(stage=stage_name)
            stage(document=document)
            if document.status == DocumentStatus.DUPLICATE:
                # Its content was processed already: the original's chunks, vectors and
                # graph are its own (ingest/actions/duplicates.py); nothing is left to do.
                return str(document.status)
        document.status = DocumentStatus.DONE
        document.save(update_fields=["status", "updated_at"])
    except (ParseError, StageFailed) as exc:
        _fail(document, exc.message)
    except Exception as exc:
        logger.exception("Document %s failed in stage %s", document.pk, stage_name)
        _fail(
            document,
            f"Internal error while {stage_name or 'starting'}: {exc.__class__.__name__}: {exc}"[
                :2000
            ],
        )
    finally:
        if refresh:
            do_refresh_source_progress(source_id=document.source_id)
    return str(document.status)


def _fail(document: Document, message: str) -> None:
    document.status = DocumentStatus.FAILED
    document.error = message
    Document.objects.filter(pk=document.pk).update(status=DocumentStatus.FAILED, error=message)
