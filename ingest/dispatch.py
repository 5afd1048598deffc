"""How ingestion work is queued: in groups of documents, in slices, sources taking turns.

Documents go to the pipeline in groups of INGEST_DOCUMENTS_PER_TASK, however they go. The
chunks of a group are embedded in one length-sorted call (ingest/actions/pipeline.py), so a
worker task, a command processing inline and a crawl handing pages on all cut the same
groups. Tasks are enqueued by dotted path once the transaction commits (system/enqueue.py):
no action imports `ingest.tasks`, and the worker never sees an uncommitted document.

A task runs one bounded slice of its group's work (system/slices.py) and queues the rest as
a new task. The queue is ordered by priority, then `run_after` (django-tasks-db's order),
and every slice task of a source carries that source's *turn*: when it was last served
(a never-served source, the oldest possible). Starting a slice moves the source's waiting
tasks to the back (ingest/actions/slices.py), so sources take turns slice by slice and a
small source is never stuck behind a big one. An upload's first slice goes first (someone
is watching); after that, uploads take turns like the rest. Other tasks (a crawl starting,
a deletion, upkeep) keep the default priority, one above the slices, and so start at the
next slice boundary.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.utils import timezone

from ingest.models import Document, Source, SourceKind
from system.enqueue import enqueue_on_commit

PIPELINE_TASK = "ingest.tasks.process_documents"
CRAWL_TASK = "ingest.tasks.crawl_source"
SLICED_TASKS = (PIPELINE_TASK, CRAWL_TASK)

# django-tasks priorities run from -100 to 100, higher first; other tasks are 0.
INTERACTIVE_PRIORITY = 10
SLICE_PRIORITY = -1
# The turn of a source never served yet: before every source that was.
FIRST_TURN = datetime(2000, 1, 1, tzinfo=UTC)
INTERACTIVE_KINDS = frozenset({SourceKind.UPLOAD, SourceKind.TEXT})


def document_groups(document_ids: Iterable[int]) -> list[list[int]]:
    """`document_ids` cut into the groups one pipeline run (one task) takes."""
    ids = list(document_ids)
    size = max(1, settings.INGEST_DOCUMENTS_PER_TASK)
    return [ids[start : start + size] for start in range(0, len(ids), size)]


def source_turn(source: Source) -> datetime:
    return source.last_slice_at or FIRST_TURN


def enqueue_documents(
    document_ids: Iterable[int],
    *,
    continuation: bool = False,
    attempt: int = 0,
    delay: timedelta | None = None,
) -> None:
    """Process the documents in the worker, one task per group of one source, after commit.
    A `continuation` (the rest of a slice) never gets the upload's first-slice priority;
    a retry (`attempt` > 0) waits `delay` first."""
    ids = list(document_ids)
    if not ids:
        return
    source_of = dict(Document.objects.filter(pk__in=ids).values_list("pk", "source_id"))
    sources = Source.objects.in_bulk(set(source_of.values()))
    by_source: dict[int, list[int]] = {}
    for pk in ids:
        if pk in source_of:
            by_source.setdefault(source_of[pk], []).append(pk)
    for source_id, documents in by_source.items():
        source = sources[source_id]
        interactive = not continuation and source.kind in INTERACTIVE_KINDS
        run_after = timezone.now() + delay if delay else source_turn(source)
        retry = {"attempt": attempt} if attempt else {}
        for group in document_groups(documents):
            enqueue_on_commit(
                PIPELINE_TASK,
                group,
                source_id=source_id,
                priority=INTERACTIVE_PRIORITY if interactive else SLICE_PRIORITY,
                run_after=run_after,
                **retry,
            )


def enqueue_crawl(source: Source, *, continuation: bool = False) -> None:
    """Run (or go on with) the source's crawl in the worker, after commit. Its first slice
    has the default priority, like any one-off task; the rest take turns with the slices."""
    if continuation:
        enqueue_on_commit(
            CRAWL_TASK, source_id=source.pk, priority=SLICE_PRIORITY, run_after=source_turn(source)
        )
    else:
        enqueue_on_commit(CRAWL_TASK, source_id=source.pk)
