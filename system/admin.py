from django.contrib import admin
from django.http import HttpRequest

from system.models import ScheduledJob, WorkerHeartbeat


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin):
    list_display = ["worker_id", "hostname", "pid", "started_at", "last_seen_at", "stopped_at"]
    readonly_fields = ["worker_id", "hostname", "pid", "started_at", "last_seen_at", "stopped_at"]


@admin.register(ScheduledJob)
class ScheduledJobAdmin(admin.ModelAdmin):
    """Read-only but for the next run: set `next_run_at` to now to have the job queued at
    the next check (the interval comes from the settings). The staff status page,
    /admin/status/, shows the same with each run's details."""

    list_display = [
        "name", "every_seconds", "last_started_at", "last_outcome", "last_message",
        "next_run_at", "running_since", "ran_by",
    ]  # fmt: skip
    readonly_fields = [
        "name", "every_seconds", "claimed_by", "ran_by", "task_id", "last_started_at",
        "last_finished_at", "running_since", "last_outcome", "last_message", "last_details",
        "runs",
    ]  # fmt: skip

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # the rows follow UPKEEP_JOBS; the workers add them
