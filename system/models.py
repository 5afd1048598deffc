"""Rows about the running system itself (not tenant data, so not workspace-scoped)."""

from django.db import models


class WorkerHeartbeat(models.Model):
    """One row per task worker process, refreshed every WORKER_HEARTBEAT_SECONDS.

    django-tasks-db has no notion of live workers; health checks and the UI need one to
    tell "queued, worker busy" from "queued, nobody is working".
    """

    worker_id = models.CharField(max_length=64, unique=True)
    hostname = models.CharField(max_length=255)
    pid = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    last_seen_at = models.DateTimeField(db_index=True)
    stopped_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-last_seen_at"]

    def __str__(self) -> str:
        return f"worker {self.worker_id} on {self.hostname} (pid {self.pid})"
