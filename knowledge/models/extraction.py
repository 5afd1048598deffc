"""The extraction cache, the LLM calls behind it and each source's extraction account.

`ExtractionRun` is the cache: one row per (window text hash, prompt version, model, schema
hash) in a workspace, holding the raw replies, what was parsed from them and what it cost.
Unchanged text is never sent to the LLM twice; a new prompt version, model or schema gives
a new key and runs again. `LlmCall` keeps every request's token usage (per call, and by its
workspace and source for totals; a deleted source's calls still count for the workspace).
`SourceExtraction` is a source's running account: which extractor, status, tokens, cost,
budget and the reservations that keep concurrent requests inside the budget.
"""

from __future__ import annotations

from decimal import Decimal

from django.db import models

from workspaces.models import WorkspaceScopedModel


class Extractor(models.TextChoices):
    LLM = "llm", "LLM"
    OFFLINE = "offline", "Offline (spaCy)"


class ExtractionRun(WorkspaceScopedModel):
    window_hash = models.CharField(max_length=64)
    prompt_version = models.CharField(max_length=64)
    model = models.CharField(max_length=200)
    schema_hash = models.CharField(max_length=64)
    extractor = models.CharField(max_length=16, choices=Extractor.choices)
    # The first source that needed it (informational; the cache is shared by all sources).
    source = models.ForeignKey(
        "ingest.Source", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    raw_output = models.JSONField(default=list, blank=True, help_text="Each reply, in order")
    result = models.JSONField(default=dict, blank=True, help_text="Parsed entities/relations")
    counts = models.JSONField(default=dict, blank=True)
    problems = models.JSONField(default=list, blank=True)
    passes = models.PositiveSmallIntegerField(default=1)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "window_hash", "prompt_version", "model", "schema_hash"],
                name="extractionrun_unique_key",
            )
        ]

    def __str__(self) -> str:
        return f"{self.extractor} {self.model} {self.window_hash[:12]}"


class LlmCall(WorkspaceScopedModel):
    source = models.ForeignKey(
        "ingest.Source", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    run = models.ForeignKey(
        ExtractionRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="calls"
    )
    purpose = models.CharField(max_length=16, help_text="extract or glean")
    model = models.CharField(max_length=200)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    usage_estimated = models.BooleanField(default=False)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal(0))
    duration_ms = models.PositiveIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=1)
    ok = models.BooleanField(default=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["workspace", "created_at"], name="llmcall_ws_time"),
            models.Index(fields=["source"], name="llmcall_source"),
        ]


class ExtractionStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    BUDGET_EXCEEDED = "budget_exceeded", "Stopped: token budget reached"
    # The workspace's monthly LLM budget is spent: documents wait, extraction goes on when
    # it is raised or the month turns (knowledge/actions/extraction/monthly_budget.py).
    PAUSED = "paused", "Paused: monthly LLM budget spent"
    FAILED = "failed", "Failed"


class SourceExtraction(WorkspaceScopedModel):
    source = models.OneToOneField(
        "ingest.Source", on_delete=models.CASCADE, related_name="extraction"
    )
    extractor = models.CharField(max_length=16, choices=Extractor.choices, blank=True)
    model = models.CharField(max_length=200, blank=True)
    status = models.CharField(
        max_length=20, choices=ExtractionStatus.choices, default=ExtractionStatus.PENDING
    )
    message = models.TextField(blank=True)
    token_budget = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="Prompt + completion tokens; empty means no limit"
    )
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    calls = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=Decimal(0))
    windows_extracted = models.PositiveIntegerField(default=0, help_text="New runs")
    windows_cached = models.PositiveIntegerField(default=0, help_text="Answered from the cache")
    windows_skipped = models.PositiveIntegerField(default=0, help_text="Left out by the budget")
    # Tallies of what materialising runs into the graph dropped or skipped, and why.
    counts = models.JSONField(default=dict, blank=True)
    # {reservation id: [tokens, expires at (unix time)]}: tokens promised to requests in
    # flight, so concurrent requests (any worker) cannot together pass the budget.
    reservations = models.JSONField(default=dict, blank=True)
    estimate = models.JSONField(default=dict, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    @property
    def tokens_used(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __str__(self) -> str:
        return f"extraction of source {self.source_id}"
