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

The pipeline owns document state. A stage of an app built on ingest (extraction) writes no
Document row: it returns a `StageReport` (from the stage or its group step) naming the
documents it finished and those that failed in it, with why, and the pipeline moves them
(ingest/actions/document_state.py); a stage that cannot finish its one document raises
`StageFailed`, and the pipeline fails it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from django.conf import settings

from ingest.actions.document_state import do_fail, do_transition, do_transition_rows
from ingest.actions.sources import do_refresh_source_progress
from ingest.models import PENDING, Document, DocumentStatus, Source
from ingest.parsers.base import ParseError
from ingest.selectors import source_is_stopped
from system.loading import import_paths

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TopicVerdict:
    """A document measured against its source's topic: the cosine similarity of their
    embeddings (None: not measured, its source has no topic) and whether it fell below the
    threshold (kept as a document, not extracted)."""

    similarity: float | None
    off_topic: bool


@dataclass(frozen=True, slots=True)
class StageReport:
    """What a stage did to its documents, for the pipeline to record: those it finished go
    from `takes` to `reaches`, those in `failed` fail with their message (for the person
    who added them). Documents no longer in `takes` (cancelled meanwhile) are left as they
    are."""

    takes: DocumentStatus
    reaches: DocumentStatus
    done: tuple[int, ...] = ()
    failed: Mapping[int, str] = field(default_factory=dict)
    # Documents the stage cannot take on yet and that must not go past it meanwhile (the
    # workspace's monthly LLM budget is spent): they stay in `takes`, still pending, with
    # why (the stage says it on their source); the source's work is queued again when the
    # wait is over, or by the `stranded_work` job.
    waiting: Mapping[int, str] = field(default_factory=dict)
    # What the stage measured of documents it finished, kept on them (Document fields of
    # the same names): how near each is to its source's topic, and whether it was left
    # out of the stage as off topic (knowledge's relevance filter).
    topic: Mapping[int, TopicVerdict] = field(default_factory=dict)


Stage = Callable[..., StageReport | None]


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
            report = prepare_group(document_ids=document_ids)
            if report is not None:
                do_record_stage(report=report)
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
                do_transition_rows(
                    documents=Document.objects.filter(pk=document.pk),
                    from_statuses=PENDING,
                    to=DocumentStatus.CANCELLED,
                )
                return "cancelled"
            Source.objects.filter(pk=document.source_id).update(stage=stage_name)
            report = stage(document=document)
            if report is not None:
                do_record_stage(report=report)
                document.refresh_from_db(fields=["status", "error"])
                if document.pk in report.waiting:
                    # Not yet: it stays where it is, pending, until its work is queued again.
                    return str(document.status)
            if document.status == DocumentStatus.DUPLICATE:
                # Its content was processed already: the original's chunks, vectors and
                # graph are its own (ingest/actions/duplicates.py); nothing is left to do.
                return str(document.status)
        do_transition(document=document, to=DocumentStatus.DONE)
    except (ParseError, StageFailed) as exc:
        do_fail(document=document, error=exc.message)
    except Exception as exc:
        logger.exception("Document %s failed in stage %s", document.pk, stage_name)
        where = stage_name or "starting"
        message = f"Internal error while {where}: {exc.__class__.__name__}: {exc}"
        do_fail(document=document, error=message[:2000])
    finally:
        if refresh:
            do_refresh_source_progress(source_id=document.source_id)
    return str(document.status)


def do_record_stage(*, report: StageReport) -> None:
    """Move the documents a stage reported on: the failed ones to failed with their
    message, the finished ones to where the stage takes them."""
    for document_id, message in report.failed.items():
        do_transition_rows(
            documents=Document.objects.filter(pk=document_id),
            from_statuses=[report.takes],
            to=DocumentStatus.FAILED,
            error=message,
        )
    _record_topic(report)
    do_transition_rows(
        documents=Document.objects.filter(pk__in=report.done),
        from_statuses=[report.takes],
        to=report.reaches,
    )


def _record_topic(report: StageReport) -> None:
    """Keep what the stage measured against the source's topic on each document it names
    (documents cancelled or changed meanwhile left as they are)."""
    for document_id, verdict in report.topic.items():
        Document.objects.filter(pk=document_id, status=report.takes).update(
            topic_similarity=verdict.similarity, off_topic=verdict.off_topic
        )
