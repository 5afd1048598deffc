"""The LLM's summary of each community of a workspace's graph, which global answers map
over. A summary is kept while its community's members stay the same (`member_hash`, of
the sorted member ids) and rewritten when they change."""

from __future__ import annotations

from decimal import Decimal

from django.db import models

from workspaces.models import WorkspaceScopedModel


class CommunitySummary(WorkspaceScopedModel):
    community = models.IntegerField(help_text="Entity.community number")
    title = models.CharField(max_length=200)
    summary = models.TextField()
    member_hash = models.CharField(max_length=64)
    size = models.PositiveIntegerField(default=0)
    model = models.CharField(max_length=200, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal(0))
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-size", "community"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "community"], name="communitysummary_unique_community"
            )
        ]

    def __str__(self) -> str:
        return f"community {self.community}: {self.title}"
