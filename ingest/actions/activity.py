"""Live progress inside a document: what the slice in flight is doing to which document.

The source's counters move when a document settles; a 2,000-page PDF settles once, after
many minutes. So the stages report their finer steps here (chunks embedded, windows
extracted, of how many), and the source's screens and API show them while it runs. Writes
are throttled to one a second per source: progress is for people, not an audit trail.
"""

from __future__ import annotations

import time

from django.utils import timezone

from ingest.models import Source

# A report that comes sooner than this after the last write of its source is dropped.
_MIN_INTERVAL_SECONDS = 1.0
_last_write: dict[int, float] = {}


def do_report_activity(
    *,
    source_id: int,
    stage: str,
    done: int = 0,
    total: int = 0,
    unit: str = "",
    document: str = "",
    force: bool = False,
) -> None:
    """Record what the source's work is doing now (at most once a second unless `force`)."""
    now = time.monotonic()
    last = _last_write.get(source_id)
    if not force and last is not None and now - last < _MIN_INTERVAL_SECONDS:
        return
    _last_write[source_id] = now
    Source.objects.filter(pk=source_id).update(
        activity={
            "stage": stage,
            "done": int(done),
            "total": int(total),
            "unit": unit,
            "document": document[:300],
            "at": timezone.now().isoformat(),
        }
    )


def do_clear_activity(*, source_id: int) -> None:
    """The slice is over: nothing is in flight for the source."""
    _last_write.pop(source_id, None)
    Source.objects.filter(pk=source_id).exclude(activity={}).update(activity={})


class ActivityCounter:
    """Counts a stage's units as they finish and reports them (throttled)."""

    def __init__(self, *, source_id: int, stage: str, unit: str, total: int, document: str = ""):
        self.source_id, self.stage, self.unit, self.document = source_id, stage, unit, document
        self.total, self.done = total, 0
        do_report_activity(
            source_id=source_id, stage=stage, total=total, unit=unit, document=document, force=True
        )

    def __call__(self, finished: int) -> None:
        self.done += finished
        do_report_activity(
            source_id=self.source_id,
            stage=self.stage,
            done=self.done,
            total=self.total,
            unit=self.unit,
            document=self.document,
        )


class PagesRead:
    """Reports a paged file's pages as the parser reads them, (read, page count) at a time
    ("Parsing 120 of 2,000 pages of Guide.pdf"). The first report is written at once: it
    is the first to know the page count, and it follows the "parsing" report closer than
    the throttle allows."""

    def __init__(self, *, source_id: int, document: str = ""):
        self.source_id, self.document = source_id, document
        self.first = True

    def __call__(self, read: int, page_count: int) -> None:
        do_report_activity(
            source_id=self.source_id,
            stage="parsing",
            done=read,
            total=page_count,
            unit="pages",
            document=self.document,
            force=self.first,
        )
        self.first = False
