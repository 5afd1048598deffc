"""Reads about entity name vectors: which entities need one from the current model, and how
many there are (the health report's counts, `HEALTH_COUNTS` in settings)."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from ingest.embeddings import configured_model_id
from knowledge.models import Entity
from workspaces.models import Workspace


def get_entities_needing_vectors(workspace: Workspace, *, model_id: str) -> QuerySet[Entity]:
    """Entities of the workspace, in every state (an unmerge or a restore brings one back),
    whose name vector is missing or was made by another model than `model_id`."""
    return Entity.objects.for_workspace(workspace).exclude(embedding_model=model_id)


def vector_counts() -> dict[str, int]:
    """Entities of every workspace without a name vector, and with one from another model
    than the configured one (both filled in by `manage.py backfill_embeddings`)."""
    model_id = configured_model_id()
    counts = Entity.objects.aggregate(
        missing=Count("pk", filter=Q(embedding__isnull=True)),
        other=Count(
            "pk",
            filter=Q(embedding__isnull=False) & ~Q(embedding_model=model_id or ""),
        ),
    )
    return {
        "entities_without_vector": counts["missing"],
        # Unknown when the configured model's weights are missing: nothing to compare with.
        "entities_stale_vector": counts["other"] if model_id else 0,
    }
