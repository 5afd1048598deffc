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


class JobOutcomeKind(models.TextChoices):
    OK = "ok", "ok"
    FAILED = "failed", "failed"
    SKIPPED = "skipped", "skipped"


class ScheduledJob(models.Model):
    """One row per upkeep job of UPKEEP_JOBS (system/upkeep.py): when it runs next, and how
    its last run went.

    The row is also the lock that keeps several workers from queueing one run twice: a
    worker claims a due job by moving `next_run_at` on in the same transaction that queues
    the run's task (system/actions/upkeep.py).
    """

    name = models.CharField(max_length=64, unique=True)
    # 0: off (no next run).
    every_seconds = models.PositiveIntegerField(default=0)
    next_run_at = models.DateTimeField(null=True, blank=True)
    # The worker that queued the last run, the one that ran it, and that run's task.
    claimed_by = models.CharField(max_length=64, blank=True)
    ran_by = models.CharField(max_length=64, blank=True)
    task_id = models.CharField(max_length=64, blank=True)
    last_started_at = models.DateTimeField(null=True, blank=True)
    last_finished_at = models.DateTimeField(null=True, blank=True)
    # Set while a run is under way.
    running_since = models.DateTimeField(null=True, blank=True)
    last_outcome = models.CharField(max_length=16, choices=JobOutcomeKind.choices, blank=True)
    last_message = models.TextField(blank=True)
    # What the job reports beyond its message (the prune report's figures per workspace).
    last_details = models.JSONField(default=dict, blank=True)
    runs = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"upkeep job {self.name}"
