"""Scheduled re-crawls: a crawl source's refresh interval, and the queueing of due rounds
by the workers' own scheduler (the `recrawl` upkeep job, ingest/hooks.py; no extra service).

A source with `refresh_every` is due at `next_run_at`: the end of its last run plus the
interval (do_refresh_source_progress moves it on whenever a run ends, however it was
started). Several workers may look for due sources at the same moment (two runs of the
job, each on its own worker); each claims a source with one conditional UPDATE of its
`next_run_at`, from the value it read to the next slot, and only the claim that changed
the row starts the round. PostgreSQL re-checks the condition of an UPDATE that waited for
another's row lock against the row as committed, so the loser matches nothing: a due
source is queued once. A source queued, running or being deleted is never due (a run
still going at its slot is not queued again; its end sets the next slot).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from ingest.actions.crawl.start import do_start_crawl
from ingest.models import CRAWL_KINDS, FINISHED_STATUSES, Source
from workspaces.errors import DomainError, InvalidInput

logger = logging.getLogger(__name__)

# Sources one run of the job starts at most; the rest are due at the next run.
MAX_PER_RUN = 500


@transaction.atomic
def do_set_refresh_every(*, source: Source, every: int) -> Source:
    """Re-crawl `source` every `every` seconds (checked by `validate_refresh_every`; 0:
    never by itself). The next run is due that long after the last run ended (at once if
    that is past), or after this one ends if it is running."""
    source = Source.objects.select_for_update().get(pk=source.pk)
    if every and not source.is_crawl:
        raise InvalidInput(
            "refresh_every: only crawls (url, sitemap, crawl) can be re-crawled on a schedule."
        )
    if not every:
        source.refresh_every = None
        source.next_run_at = None
    else:
        base = source.finished_at if source.is_finished and source.finished_at else timezone.now()
        source.refresh_every = every
        source.next_run_at = base + timedelta(seconds=every)
    source.save(update_fields=["refresh_every", "next_run_at"])
    return source


@dataclass
class QueuedRecrawls:
    """One look for due sources: the ids of those this caller started, and of those whose
    start was refused (with why; their next slot is taken all the same)."""

    started: list[int] = field(default_factory=list)
    refused: dict[int, str] = field(default_factory=dict)


def due_sources(now: datetime) -> list[tuple[int, datetime, int]]:
    """(id, next_run_at, refresh_every) of the crawl sources due at `now`, oldest first."""
    rows = (
        Source.objects.filter(
            kind__in=CRAWL_KINDS,
            status__in=FINISHED_STATUSES,
            refresh_every__isnull=False,
            next_run_at__lte=now,
        )
        .order_by("next_run_at", "pk")
        .values_list("pk", "next_run_at", "refresh_every")[:MAX_PER_RUN]
    )
    return [(pk, at, every) for pk, at, every in rows if at is not None and every]


def do_queue_due_recrawls(*, now: datetime | None = None) -> QueuedRecrawls:
    """Start a new round of every due crawl source this caller claims (see the module's
    docstring); each claim and start is its own transaction, so the crawl task is queued
    when it commits."""
    now = now or timezone.now()
    outcome = QueuedRecrawls()
    for pk, due_at, every in due_sources(now):
        with transaction.atomic():
            claimed = Source.objects.filter(
                pk=pk,
                next_run_at=due_at,
                refresh_every=every,
                status__in=FINISHED_STATUSES,
            ).update(next_run_at=now + timedelta(seconds=every))
            if not claimed:
                continue  # another worker's, or no longer due
            try:
                with transaction.atomic():
                    do_start_crawl(source=Source.objects.get(pk=pk), scheduled=True)
            except DomainError as exc:
                logger.warning("Scheduled re-crawl of source %s refused: %s", pk, exc.message)
                outcome.refused[pk] = exc.message
                continue
            outcome.started.append(pk)
    return outcome
