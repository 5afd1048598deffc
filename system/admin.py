from django.contrib import admin

from system.models import WorkerHeartbeat


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin):
    list_display = ["worker_id", "hostname", "pid", "started_at", "last_seen_at", "stopped_at"]
    readonly_fields = ["worker_id", "hostname", "pid", "started_at", "last_seen_at", "stopped_at"]
