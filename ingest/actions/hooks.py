"""What apps built on ingest are told about chunks, through hooks named in settings (ingest
never imports them): chunks about to be deleted, chunks that moved to another document."""

from __future__ import annotations

from django.conf import settings

from system.loading import import_paths


def run_deletion_hooks(chunk_ids: list[int]) -> None:
    """Call INGEST_DELETION_HOOKS (imported lazily) with chunks about to be deleted, so apps
    built on ingest take back what those chunks contributed (ingest never imports them).
    Every path that deletes chunks calls this first, in the same transaction."""
    if chunk_ids:
        for hook in import_paths(settings.INGEST_DELETION_HOOKS):
            hook(chunk_ids=chunk_ids)


def run_move_hooks(chunk_ids: list[int]) -> None:
    """Call INGEST_CHUNK_MOVE_HOOKS with chunks that now belong to another document (a
    duplicate promoted to original, ingest/actions/duplicates.py), after the move and in
    the same transaction, so what is derived from a chunk's document (an entity's sources)
    follows it. Their text, offsets and evidence stay as they were."""
    if chunk_ids:
        for hook in import_paths(settings.INGEST_CHUNK_MOVE_HOOKS):
            hook(chunk_ids=chunk_ids)
