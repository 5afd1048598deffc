"""Upkeep jobs for the tests of the scheduler (UPKEEP_JOBS is overridden to name these)."""

from __future__ import annotations

from system.models import WorkerHeartbeat
from system.upkeep import JobOutcome


def count_workers() -> JobOutcome:
    return JobOutcome.ok(f"{WorkerHeartbeat.objects.count()} worker(s)", {"seen": True})


def broken() -> JobOutcome:
    raise ValueError("the secret path /srv/docs/payroll.pdf is unreadable")
