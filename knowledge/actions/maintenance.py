"""Housekeeping of a workspace's stored text: pruning chunks nobody uses.

A chunk earns its keep by being evidence (a mention or a relation's sentence) or by being
retrieved. `do_prune` deletes the chunks that have been neither for longer than a given age;
everything the graph derives from stays intact because evidence chunks are never touched.
Entities left without any mention ("orphans", typically curated ones whose documents
went) are reported for a person to judge, never deleted here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from ingest.actions.sources import do_refresh_source_progress
from ingest.models import Chunk
from knowledge.models import Mention, RelationEvidence
from knowledge.selectors.entities import get_orphan_entities
from workspaces.errors import InvalidInput
from workspaces.models import Workspace

_AGE = re.compile(r"(\d{1,6})\s*([dhm])")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}
ORPHANS_LISTED = 50


def parse_age(text: str) -> timedelta:
    """ "90d", "12h", "30m" -> a timedelta; anything else is InvalidInput saying what is
    expected (a typo must never widen what a prune deletes)."""
    found = _AGE.fullmatch(text.strip().lower())
    if found is None or int(found.group(1)) == 0:
        raise InvalidInput(
            f"--older-than: a positive whole number followed by d (days), h (hours) or "
            f"m (minutes), e.g. 90d, 12h, 30m; got {text!r}."
        )
    return timedelta(**{_UNITS[found.group(2)]: int(found.group(1))})


def get_prunable_chunks(workspace: Workspace, *, cutoff: datetime) -> QuerySet[Chunk]:
    """Chunks of the workspace created before `cutoff`, never retrieved, and not evidence
    for any entity or relation."""
    return (
        Chunk.objects.for_workspace(workspace)
        .filter(retrieved_count=0, created_at__lt=cutoff)
        .filter(~Exists(Mention.objects.filter(chunk=OuterRef("pk"))))
        .filter(~Exists(RelationEvidence.objects.filter(chunk=OuterRef("pk"))))
    )


@dataclass(slots=True)
class PruneReport:
    workspace: str
    older_than: str
    cutoff: datetime
    dry_run: bool
    chunks_eligible: int = 0
    chunks_deleted: int = 0
    documents_touched: int = 0
    orphan_entities: int = 0
    # The first ORPHANS_LISTED orphans by name: {"id", "name", "type"}.
    orphans: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace,
            "older_than": self.older_than,
            "cutoff": self.cutoff.isoformat(),
            "dry_run": self.dry_run,
            "chunks_eligible": self.chunks_eligible,
            "chunks_deleted": self.chunks_deleted,
            "documents_touched": self.documents_touched,
            "orphan_entities": self.orphan_entities,
            "orphans": self.orphans,
        }


def do_prune(
    *,
    workspace: Workspace,
    older_than: timedelta,
    dry_run: bool = False,
    batch_size: int = 1000,
    label: str = "",
) -> PruneReport:
    """Delete (or, dry run, only count) the prunable chunks, in batches of `batch_size`,
    each batch one short transaction, and report orphan entities.

    Each batch locks its chunks first and then deletes only those still prunable: a mention
    or retrieval that committed meanwhile keeps its chunk (deleting it would cascade to new
    evidence), and a chunk another transaction holds is skipped, not waited for."""
    cutoff = timezone.now() - older_than
    report = PruneReport(
        workspace=workspace.slug,
        older_than=label or str(older_than),
        cutoff=cutoff,
        dry_run=dry_run,
    )
    prunable = get_prunable_chunks(workspace, cutoff=cutoff)
    report.chunks_eligible = prunable.count()
    touched_sources: set[int] = set()
    touched_documents: set[int] = set()
    if not dry_run:
        while True:
            with transaction.atomic():
                batch = list(
                    prunable.select_for_update(skip_locked=True, of=("self",))
                    .order_by("pk")
                    .values_list("pk", "document_id", "document__source_id")[:batch_size]
                )
                if not batch:
                    break
                still = get_prunable_chunks(workspace, cutoff=cutoff).filter(
                    pk__in=[pk for pk, _, _ in batch]
                )
                deleted_ids = set(still.values_list("pk", flat=True))
                if not deleted_ids:
                    break
                Chunk.objects.filter(pk__in=deleted_ids).delete()
            report.chunks_deleted += len(deleted_ids)
            for pk, document_id, source_id in batch:
                if pk in deleted_ids:
                    touched_documents.add(document_id)
                    touched_sources.add(source_id)
        for source_id in sorted(touched_sources):
            do_refresh_source_progress(source_id=source_id)
    else:
        touched_documents = set(prunable.values_list("document_id", flat=True).distinct())
    report.documents_touched = len(touched_documents)
    orphans = get_orphan_entities(workspace)
    report.orphan_entities = orphans.count()
    report.orphans = [
        {"id": e.pk, "name": e.name, "type": e.type.name} for e in orphans[:ORPHANS_LISTED]
    ]
    return report
