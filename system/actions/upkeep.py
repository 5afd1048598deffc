"""Queue the scheduled upkeep jobs when due, and run one, recording how it went.

Several workers look for due jobs at once. Each claims a due job by locking its row
(SKIP LOCKED: a row another worker holds is that worker's) and, in the same transaction,
queues the run's task and moves `next_run_at` to the next slot: when it commits the job is
no longer due, so no other worker queues that slot again, and a claim that fails to commit
queues nothing. A job whose last run is still queued or running has its slot skipped
rather than a second run queued behind it. The run itself is an ordinary task, handed
back to the queue by the orphan check if its worker dies (system/actions/tasks.py).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.module_loading import import_string

from system.models import ScheduledJob
from system.selectors import upkeep_run_pending
from system.upkeep import JobOutcome, JobSpec, configured_jobs

logger = logging.getLogger(__name__)

# The task that runs one job (resolved by path: the task module imports these actions).
RUN_TASK = "system.tasks.run_upkeep_job"
MESSAGE_CHARS = 2000


def _next_slot(job: ScheduledJob, spec: JobSpec, now: datetime) -> datetime:
    """The first slot of the job's cadence after `now` (a worker that was down for a day
    runs a job once, not once per missed slot)."""
    every = timedelta(seconds=spec.every)
    slot = job.next_run_at or now
    if slot > now:
        return slot
    missed = (now - slot) // every
    return slot + every * (missed + 1)


def _add_missing_jobs(specs: dict[str, JobSpec], now: datetime) -> None:
    known = set(ScheduledJob.objects.filter(name__in=specs).values_list("name", flat=True))
    ScheduledJob.objects.bulk_create(
        [
            ScheduledJob(
                name=spec.name,
                every_seconds=spec.every,
                next_run_at=now + timedelta(seconds=spec.every) if spec.every else None,
            )
            for spec in specs.values()
            if spec.name not in known
        ],
        ignore_conflicts=True,  # another worker added it meanwhile
    )


def do_queue_due_jobs(*, worker_id: str, now: datetime | None = None) -> list[str]:
    """Queue a run of every due job this worker claims; returns their names. A job whose
    interval changed in the settings is rescheduled from now (off: no next run)."""
    now = now or timezone.now()
    specs = configured_jobs()
    _add_missing_jobs(specs, now)
    queued: list[str] = []
    with transaction.atomic():
        for job in ScheduledJob.objects.select_for_update(skip_locked=True).filter(name__in=specs):
            spec = specs[job.name]
            if job.every_seconds != spec.every:
                job.every_seconds = spec.every
                job.next_run_at = now + timedelta(seconds=spec.every) if spec.every else None
                job.save(update_fields=["every_seconds", "next_run_at"])
                continue
            if not spec.every or job.next_run_at is None or job.next_run_at > now:
                continue
            next_run_at = _next_slot(job, spec, now)
            if upkeep_run_pending(job):
                logger.warning("Upkeep job %s is still queued or running; slot skipped", job.name)
                job.next_run_at = next_run_at
                job.save(update_fields=["next_run_at"])
                continue
            result = import_string(RUN_TASK).enqueue(job.name)
            job.task_id = str(result.id)
            job.claimed_by = worker_id
            job.next_run_at = next_run_at
            job.save(update_fields=["task_id", "claimed_by", "next_run_at"])
            queued.append(job.name)
    if queued:
        logger.info("Queued upkeep job(s): %s", ", ".join(queued))
    return queued


def do_run_upkeep_job(*, name: str, worker_id: str = "") -> JobOutcome:
    """Run the job `name` now and record its outcome (a job that raises is recorded as
    failed, and the error raised again so the task fails as well)."""
    spec = configured_jobs().get(name)
    if spec is None or not spec.every:
        outcome = JobOutcome.skipped("turned off" if spec else "not a configured job")
        _record(name, outcome)
        return outcome
    started = timezone.now()
    ScheduledJob.objects.filter(name=name).update(
        running_since=started, last_started_at=started, ran_by=worker_id[:64]
    )
    try:
        outcome = import_string(spec.run)()
    except Exception as exc:
        # The message is public (the health report); the error's text, which may quote
        # a document or a URL, stays in the details for staff.
        _record(
            name,
            JobOutcome.failed(f"raised {type(exc).__name__}", {"error": str(exc)[:MESSAGE_CHARS]}),
        )
        raise
    _record(name, outcome)
    return outcome


def _record(name: str, outcome: JobOutcome) -> None:
    ScheduledJob.objects.filter(name=name).update(
        runs=F("runs") + 1,
        running_since=None,
        last_finished_at=timezone.now(),
        last_outcome=outcome.kind,
        last_message=outcome.message[:MESSAGE_CHARS],
        last_details=outcome.details,
    )
    logger.info("Upkeep job %s: %s: %s", name, outcome.kind, outcome.message)
