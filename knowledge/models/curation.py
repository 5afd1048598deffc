"""Human decisions and what consolidation remembers about names.

`Alias` is the alias table consolidation looks names up in (each row says where it came
from: a merge, a person, or an automatic match). `CurationEvent` records every curation
action — manual or automatic — with the payload needed to undo it exactly; `CurationRule`
holds the rules those actions imply (a name pinned to an entity, a blocked name, a pair
that is "not the same"), which consolidation applies before anything automatic, so a
decision survives re-ingestion and re-extraction. `MergeSuggestion` is the review queue for
pairs in the doubtful band.

Relations are curated the same way: each change is a `CurationEvent` (its `relation` the
edge changed), and `RelationRule` remembers what extraction must do with an edge it
finds again (drop one a person deleted, land one they retyped or reversed on the edge as
they left it). `RelationNote` is a hand-made relation's own evidence: who added it, why,
and optionally where in a document.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from knowledge.models.graph import Entity, Relation
from knowledge.models.schema import EntityType, RelationType
from workspaces.models import WorkspaceScopedModel


class AliasOrigin(models.TextChoices):
    MERGE = "merge", "Merged entity"
    MANUAL = "manual", "Added by a person"
    AUTO = "auto", "Matched automatically"


class Alias(WorkspaceScopedModel):
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="alias_rows")
    name = models.CharField(max_length=300)
    canonical = models.CharField(max_length=300)
    origin = models.CharField(max_length=16, choices=AliasOrigin.choices)
    event = models.ForeignKey(
        "knowledge.CurationEvent", null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )  # fmt: skip
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "aliases"
        constraints = [
            models.UniqueConstraint(fields=["entity", "canonical"], name="alias_unique_per_entity")
        ]
        indexes = [models.Index(fields=["workspace", "canonical"], name="alias_ws_canon")]

    def __str__(self) -> str:
        return self.name


class CurationAction(models.TextChoices):
    MERGE = "merge", "Merge"
    UNMERGE = "unmerge", "Unmerge"
    RENAME = "rename", "Rename"
    RETYPE = "retype", "Retype"
    DELETE = "delete", "Delete"
    RESTORE = "restore", "Restore"
    SPLIT = "split", "Split"
    ALIAS_ADD = "alias_add", "Add alias"
    ALIAS_REMOVE = "alias_remove", "Remove alias"
    BLOCK = "block", "Block a name"
    NOT_SAME = "not_same", "Not the same"
    AUTO_MERGE = "auto_merge", "Automatic merge"
    RELATION_DELETE = "relation_delete", "Delete a relation"
    RELATION_RETYPE = "relation_retype", "Retype a relation"
    RELATION_REVERSE = "relation_reverse", "Reverse a relation"
    RELATION_ADD = "relation_add", "Add a relation"
    RELATION_EDIT = "relation_edit", "Edit a relation's description"
    RELATION_UNDO = "relation_undo", "Undo a relation change"


class CurationEvent(WorkspaceScopedModel):
    action = models.CharField(max_length=16, choices=CurationAction.choices)
    # Null for automatic decisions of consolidation.
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )  # fmt: skip
    entity = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.SET_NULL, related_name="curation_events"
    )
    # The relation a relation action changed (null for entity actions).
    relation = models.ForeignKey(
        Relation, null=True, blank=True, on_delete=models.SET_NULL, related_name="curation_events"
    )
    # Everything needed to undo the action exactly (ids and prior field values).
    payload = models.JSONField(default=dict, blank=True)
    summary = models.CharField(max_length=500, blank=True)
    undone_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["workspace", "-created_at"], name="curation_ws_time")]

    def __str__(self) -> str:
        return f"{self.action} #{self.pk}"


class RuleKind(models.TextChoices):
    ALIAS_PIN = "alias_pin", "Name pinned to an entity"
    BLOCKED = "blocked", "Blocked name"
    NOT_SAME = "not_same", "Not the same"


class CurationRule(WorkspaceScopedModel):
    kind = models.CharField(max_length=16, choices=RuleKind.choices)
    # alias_pin / blocked: the canonical name the rule is about.
    canonical = models.CharField(max_length=300, blank=True)
    # blocked: only within this type (null: every type); alias_pin: the type it applies in.
    entity_type = models.ForeignKey(
        EntityType, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # alias_pin: the entity the name belongs to; not_same: the pair (lower id first).
    entity = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    other = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    event = models.ForeignKey(
        CurationEvent, null=True, blank=True, on_delete=models.SET_NULL, related_name="rules"
    )
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["workspace", "kind", "canonical"],
                condition=Q(active=True),
                name="rule_active_lookup",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.canonical or (self.entity_id, self.other_id)}"


class RelationOutcome(models.TextChoices):
    SUPPRESS = "suppress", "Dropped (a person deleted it)"
    REDIRECT = "redirect", "Lands on the curated relation"


class RelationRule(WorkspaceScopedModel):
    """What extraction does with an edge (source, target, type as extracted) a person
    changed: `suppress` drops it (counted as `relations_suppressed_by_curation`),
    `redirect` puts its evidence on `relation` wherever that edge points now (retyped,
    reversed). The undo of the event that made a rule retires it."""

    source = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    target = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    type = models.ForeignKey(RelationType, on_delete=models.CASCADE, related_name="+")
    outcome = models.CharField(max_length=16, choices=RelationOutcome.choices)
    relation = models.ForeignKey(Relation, on_delete=models.CASCADE, related_name="rules")
    event = models.ForeignKey(
        CurationEvent, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="relation_rules",
    )  # fmt: skip
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["workspace", "source", "target"],
                condition=Q(active=True),
                name="relationrule_active_edge",
            )
        ]

    def __str__(self) -> str:
        return f"{self.outcome} {self.source_id} -{self.type_id}-> {self.target_id}"


class RelationNote(WorkspaceScopedModel):
    """Why a person added a relation by hand: who, the reason they gave, and optionally the
    document span that shows it (a chunk of the workspace, document offsets)."""

    relation = models.ForeignKey(Relation, on_delete=models.CASCADE, related_name="notes")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )  # fmt: skip
    reason = models.TextField(blank=True)
    chunk = models.ForeignKey(
        "ingest.Chunk", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    char_start = models.PositiveIntegerField(null=True, blank=True)
    char_end = models.PositiveIntegerField(null=True, blank=True)
    event = models.ForeignKey(
        CurationEvent, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"note on relation {self.relation_id}"


class SuggestionStatus(models.TextChoices):
    OPEN = "open", "Open"
    ACCEPTED = "accepted", "Accepted"
    REJECTED = "rejected", "Rejected"


class MergeSuggestion(WorkspaceScopedModel):
    # The pair, lower id first: one suggestion per pair, ever.
    entity_a = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    entity_b = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    score = models.FloatField()
    reasons = models.JSONField(default=list, blank=True)
    status = models.CharField(
        max_length=16, choices=SuggestionStatus.choices, default=SuggestionStatus.OPEN
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )  # fmt: skip
    decided_at = models.DateTimeField(null=True, blank=True)
    # With an LLM configured, its answer for the pair: same | different | unsure, and why.
    llm_verdict = models.CharField(max_length=16, blank=True)
    llm_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-score", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "entity_a", "entity_b"], name="suggestion_unique_pair"
            ),
            models.CheckConstraint(
                condition=Q(entity_a__lt=models.F("entity_b")), name="suggestion_ordered_pair"
            ),
        ]
        indexes = [models.Index(fields=["workspace", "status", "-score"], name="suggestion_queue")]

    def __str__(self) -> str:
        return f"{self.entity_a_id} ~ {self.entity_b_id} ({self.score:.2f})"
