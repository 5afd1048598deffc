"""Background tasks of the system app: one run of a scheduled upkeep job."""

from __future__ import annotations

from django.tasks import TaskContext, task

from system.actions.upkeep import do_run_upkeep_job


@task(takes_context=True)
def run_upkeep_job(context: TaskContext, name: str) -> str:
    """Run the upkeep job `name` (queued by a worker's scheduler when due) and return its
    outcome and message; the job's row records the same (system/models.py)."""
    workers = context.task_result.worker_ids
    outcome = do_run_upkeep_job(name=name, worker_id=workers[-1] if workers else "")
    return f"{outcome.kind}: {outcome.message}"
