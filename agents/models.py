"""One row per tool call or resource read an agent made: the call log, and what the
per-token rate limit counts (agents/limits.py), so the limit holds across every web
worker and the stdio processes alike."""

from __future__ import annotations

from django.db import models

from workspaces.models import ApiToken, WorkspaceScopedModel


class AgentCall(WorkspaceScopedModel):
    token = models.ForeignKey(
        ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    tool = models.CharField(max_length=100, help_text="tool name, or resources/read")
    transport = models.CharField(max_length=16, help_text="http | stdio")
    duration_ms = models.FloatField()
    ok = models.BooleanField()
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            models.Index(fields=["token", "created_at"], name="agentcall_token_recent"),
            models.Index(fields=["workspace", "created_at"], name="agentcall_workspace_recent"),
        ]

    def __str__(self) -> str:
        return f"{self.tool} ({'ok' if self.ok else 'error'}, {self.duration_ms:.0f} ms)"
