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


# --- the community map (knowledge/selectors/community_map.py) ------------------------------
# Written by `do_compute_communities` in the transaction that numbers the entities, so a
# request at 200,000 entities reads a few hundred rows instead of grouping the graph.


class CommunityRun(WorkspaceScopedModel):
    """The workspace's last community computation: when, and the size of the graph it saw
    (the map calls itself stale when the graph has moved away from these figures)."""

    computed_at = models.DateTimeField()
    # Active entities and active relations (any ends) when it ran: the same counts the
    # staleness check takes.
    entities = models.PositiveIntegerField(default=0)
    relations = models.PositiveIntegerField(default=0)
    # The newest active entity and relation ids then: a graph that lost one relation and
    # gained another has the same counts but not the same newest id.
    last_entity = models.BigIntegerField(default=0)
    last_relation = models.BigIntegerField(default=0)
    # Top-level communities, the singletons included.
    communities = models.PositiveIntegerField(default=0)
    split_above = models.PositiveIntegerField(default=0)
    seconds = models.FloatField(default=0.0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace"], name="communityrun_unique_workspace")
        ]

    def __str__(self) -> str:
        return f"communities of {self.workspace_id} at {self.computed_at:%Y-%m-%d %H:%M}"


class Community(WorkspaceScopedModel):
    """One community (`subcommunity` null) or sub-community of the map: its size, label and
    best-connected members. An entity without relations, alone in its community, has no
    row (there can be tens of thousands; the map counts them among "others")."""

    community = models.IntegerField(help_text="Entity.community number")
    subcommunity = models.IntegerField(null=True, blank=True, help_text="Entity.subcommunity")
    size = models.PositiveIntegerField()
    # The names of its three best-connected members joined by " · " (untrusted text).
    label = models.CharField(max_length=1000)
    # Its five best-connected members: [{"id", "name", "type"}] (degree, mentions, id).
    top = models.JSONField(default=list)
    # Sub-communities (top level only; 0: not split).
    children = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-size", "community", "subcommunity"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "community", "subcommunity"],
                name="community_unique_key",
                nulls_distinct=False,
            )
        ]

    def __str__(self) -> str:
        key = (
            f"{self.community}"
            if self.subcommunity is None
            else (f"{self.community}.{self.subcommunity}")
        )
        return f"community {key} ({self.size}): {self.label}"


class CommunityLink(WorkspaceScopedModel):
    """The relations between two communities of one level: top-level communities
    (`community` null), or two sub-communities of `community`. Both directions summed,
    `source` < `target`."""

    community = models.IntegerField(null=True, blank=True, help_text="the parent, or null")
    source = models.IntegerField()
    target = models.IntegerField()
    count = models.PositiveIntegerField()
    weight = models.FloatField()

    class Meta:
        indexes = [models.Index(fields=["workspace", "community"], name="communitylink_level")]

    def __str__(self) -> str:
        return f"{self.source} - {self.target} in {self.community}: {self.count}"
