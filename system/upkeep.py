"""Scheduled upkeep: periodic jobs the task workers run themselves, with no extra service.

The jobs are named in the UPKEEP_JOBS setting (name -> {"run": dotted path, "every":
seconds, 0 = off}); the apps above `system` provide them and `system` imports none of
them. A job is a function without arguments that returns a `JobOutcome` (or raises: the
run is then recorded as failed). Each worker's `UpkeepThread` looks for due jobs every
UPKEEP_CHECK_SECONDS (system/scheduler.py) and queues a normal task for each one it claims
(system/actions/upkeep.py), so a run takes its turn in the queue like any other work and
the worker that picks it up records how it went.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from system.models import JobOutcomeKind


@dataclass(frozen=True, slots=True)
class JobOutcome:
    """How a run went: `message` is the one line the status page and the public health
    report show, so it names no workspace, document or URL (counts only); `details`
    (JSON-safe) is kept beside it for staff (the status page): the figures per workspace,
    an error's text."""

    kind: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def ok(cls, message: str, details: dict[str, Any] | None = None) -> JobOutcome:
        return cls(JobOutcomeKind.OK, message, details or {})

    @classmethod
    def skipped(cls, message: str, details: dict[str, Any] | None = None) -> JobOutcome:
        return cls(JobOutcomeKind.SKIPPED, message, details or {})

    @classmethod
    def failed(cls, message: str, details: dict[str, Any] | None = None) -> JobOutcome:
        return cls(JobOutcomeKind.FAILED, message, details or {})


@dataclass(frozen=True, slots=True)
class JobSpec:
    name: str
    run: str  # dotted path of the job function
    every: int  # seconds; 0 = off


def configured_jobs() -> dict[str, JobSpec]:
    """The jobs of UPKEEP_JOBS, by name (their functions are not imported here)."""
    jobs: dict[str, dict[str, Any]] = settings.UPKEEP_JOBS
    return {
        name: JobSpec(name, str(spec["run"]), max(int(spec.get("every") or 0), 0))
        for name, spec in jobs.items()
    }
