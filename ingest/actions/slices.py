"""One slice of a source's work, as the worker runs it (system/slices.py, ingest/dispatch.py).

A slice takes its source's turn (the source's other waiting tasks move behind every other
source's), runs for at most INGEST_SLICE_SECONDS, and queues what is left as a new task:
at the back of the line when its time was up, at once when the worker is stopping.
A cancelled source's documents are cancelled; nothing more is queued for it.

A slice that fails outright (not a document: the database went away, a bug in a group
step) does not strand its documents: they are queued again after a pause, and after
INGEST_SLICE_ATTEMPTS failures in a row they fail with the error, where the user sees it.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Least
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from ingest.actions.activity import do_clear_activity
from ingest.actions.crawl import do_run_crawl
from ingest.actions.document_state import do_transition_rows
from ingest.actions.pipeline import do_process_documents
from ingest.actions.sources import do_refresh_source_progress
from ingest.dispatch import (
    CRAWL_TASK,
    PIPELINE_TASK,
    SLICE_PRIORITY,
    SLICED_TASKS,
    enqueue_crawl,
    enqueue_documents,
)
from ingest.embedding_lane import forget_sent_ahead
from ingest.models import (
    PENDING,
    CrawlPage,
    CrawlPageStatus,
    Document,
    DocumentStatus,
    Source,
    SourceStatus,
)
from ingest.selectors import source_is_stopped
from system import slices

logger = logging.getLogger(__name__)


def do_process_slice(
    *, document_ids: list[int], source_id: int | None = None, attempt: int = 0
) -> list[str]:
    """Advance the documents by one slice of work; returns their statuses (what is left
    is queued as a new task)."""
    source_id = source_id or _source_of(document_ids)
    if source_id is None:
        return ["missing"] * len(document_ids)
    _take_turn(source_id)
    try:
        with slices.work_slice(_budget(source_id)):
            return do_process_documents(document_ids=document_ids)
    except slices.SliceInterrupted as stop:
        _hand_on(document_ids, source_id=source_id, reason=stop.reason)
    except Exception as exc:
        logger.exception("A slice of source %s failed", source_id)
        _retry_or_fail(document_ids, source_id=source_id, attempt=attempt, error=exc)
    finally:
        do_clear_activity(source_id=source_id)
    return list(
        Document.objects.filter(pk__in=document_ids).order_by("pk").values_list("status", flat=True)
    )


def do_crawl_slice(*, source_id: int) -> str:
    """Crawl for one slice; the frontier is in the database, so the next slice (queued
    here) goes on where this one stopped. Returns the source's status."""
    source = Source.objects.filter(pk=source_id).first()
    if source is None:
        return "gone"
    _take_turn(source_id)
    try:
        with slices.work_slice(_budget(source_id)):
            return do_run_crawl(source_id=source_id)
    except slices.SliceInterrupted as stop:
        if stop.reason != slices.CANCELLED:
            source.refresh_from_db()
            with transaction.atomic():
                enqueue_crawl(source, continuation=True)
        return f"{stop.reason}: crawl continues in a new task"


def _source_of(document_ids: list[int]) -> int | None:
    return (
        Document.objects.filter(pk__in=document_ids)
        .order_by("pk")
        .values_list("source_id", flat=True)
        .first()
    )


def _budget(source_id: int) -> slices.WorkSlice:
    return slices.WorkSlice(
        seconds=settings.INGEST_SLICE_SECONDS, stop_check=lambda: source_is_stopped(source_id)
    )


def _take_turn(source_id: int) -> None:
    """This source is served now: its other waiting slices go behind every other source's
    (and lose an upload's first-slice priority)."""
    now = timezone.now()
    Source.objects.filter(pk=source_id).update(last_slice_at=now)
    DBTaskResult.objects.filter(
        status=TaskResultStatus.READY,
        task_path__in=SLICED_TASKS,
        args_kwargs__kwargs__source_id=source_id,
    ).update(run_after=now, priority=Least(F("priority"), SLICE_PRIORITY))


def _hand_on(document_ids: list[int], *, source_id: int, reason: str) -> None:
    """After a slice stopped early: cancel (its source was) or queue the rest."""
    pending = Document.objects.filter(pk__in=document_ids, status__in=PENDING)
    if reason == slices.CANCELLED:
        forget_sent_ahead(document_ids)
        do_transition_rows(documents=pending, from_statuses=PENDING, to=DocumentStatus.CANCELLED)
    else:
        with transaction.atomic():
            enqueue_documents(
                list(pending.order_by("pk").values_list("pk", flat=True)), continuation=True
            )
    do_refresh_source_progress(source_id=source_id)


def _retry_or_fail(
    document_ids: list[int], *, source_id: int, attempt: int, error: Exception
) -> None:
    pending = list(
        Document.objects.filter(pk__in=document_ids, status__in=PENDING)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    if not pending:
        return
    if attempt + 1 >= settings.INGEST_SLICE_ATTEMPTS:
        message = f"Processing failed {attempt + 1} times: {error.__class__.__name__}: {error}"
        do_transition_rows(
            documents=Document.objects.filter(pk__in=pending),
            from_statuses=PENDING,
            to=DocumentStatus.FAILED,
            error=message[:2000],
        )
        do_refresh_source_progress(source_id=source_id)
        return
    with transaction.atomic():
        enqueue_documents(
            pending,
            continuation=True,
            attempt=attempt + 1,
            delay=timedelta(seconds=settings.INGEST_SLICE_RETRY_SECONDS * (attempt + 1)),
        )


def do_requeue_stranded_work(*, idle_for: timedelta | None = None) -> dict[int, int]:
    """Queue again the waiting work of running sources that have no task queued or running
    and no slice started within `idle_for` (UPKEEP_STRANDED_AFTER by default); returns
    {source id: documents queued} (a crawl with waiting pages counts 0 documents)."""
    idle_for = idle_for or timedelta(seconds=settings.UPKEEP_STRANDED_AFTER)
    quiet_since = timezone.now() - idle_for
    requeued: dict[int, int] = {}
    for source in Source.objects.filter(status__in=[SourceStatus.QUEUED, SourceStatus.RUNNING]):
        if (source.last_slice_at or source.started_at or source.created_at) > quiet_since:
            continue
        queued = _requeue_waiting(source)
        if queued is not None:
            logger.warning("Queued again the stranded work of source %s", source.pk)
            requeued[source.pk] = queued
    return requeued


def do_requeue_waiting_work(*, source_ids: list[int]) -> dict[int, int]:
    """Queue now the waiting work of these sources, when they run and no task of theirs is
    queued or running: what the `stranded_work` job does after UPKEEP_STRANDED_AFTER, for a
    caller that knows the wait is over (extraction paused by the workspace's monthly LLM
    budget, which an admin just raised). Returns {source id: documents queued}."""
    requeued: dict[int, int] = {}
    for source in Source.objects.filter(
        pk__in=source_ids, status__in=[SourceStatus.QUEUED, SourceStatus.RUNNING]
    ).order_by("pk"):
        queued = _requeue_waiting(source)
        if queued is not None:
            requeued[source.pk] = queued
    return requeued


def _requeue_waiting(source: Source) -> int | None:
    """Queue the source's waiting documents (and its crawl, with pages waiting) unless a
    task of it is open; the documents queued, or None when nothing was queued."""
    if _has_task(source.pk):
        return None
    pending = list(
        Document.objects.filter(source=source, status__in=PENDING)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    pages_waiting = (
        source.is_crawl
        and CrawlPage.objects.filter(
            source=source, status__in=[CrawlPageStatus.QUEUED, CrawlPageStatus.FETCHING]
        ).exists()
    )
    if not pending and not pages_waiting:
        do_refresh_source_progress(source_id=source.pk)  # finishes it if it is done
        return None
    with transaction.atomic():
        enqueue_documents(pending, continuation=True)
        if pages_waiting:
            enqueue_crawl(source, continuation=True)
    return len(pending)


def _has_task(source_id: int) -> bool:
    """A task of the source's work is queued or running. Tasks queued before slices
    existed name the source by position only: their document ids are looked at."""
    open_tasks = DBTaskResult.objects.filter(
        status__in=[TaskResultStatus.READY, TaskResultStatus.RUNNING], task_path__in=SLICED_TASKS
    )
    if open_tasks.filter(args_kwargs__kwargs__source_id=source_id).exists():
        return True
    if open_tasks.filter(task_path=CRAWL_TASK, args_kwargs__args=[source_id]).exists():
        return True
    documents = set(Document.objects.filter(source_id=source_id).values_list("pk", flat=True))
    return any(
        documents.intersection(task.args_kwargs["args"][0] if task.args_kwargs["args"] else [])
        for task in open_tasks.filter(task_path=PIPELINE_TASK, args_kwargs__kwargs={})
    )
