"""Access counts: the one write of a search.

When a search records access, the returned chunks and entities get `retrieved_count += 1`
and `last_retrieved_at`, which pruning and "popular" views read. The search hands this to
the retrieval pool (knowledge/retrieval/pool.py) after building its answer.
"""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from ingest.models import Chunk
from knowledge.models import Entity
from workspaces.models import Workspace


def record_access_counts(workspace: Workspace, chunk_ids: list[int], entity_ids: list[int]) -> None:
    """retrieved_count += 1 and last_retrieved_at for what was returned: one UPDATE per
    table (ids sorted, so concurrent searches lock rows in the same order), in one
    transaction that does not wait for its WAL flush: these are statistics, and losing the
    last few on a crash costs nothing, while waiting for the disk would dominate a search."""
    if not chunk_ids and not entity_ids:
        return
    now = timezone.now()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('synchronous_commit', 'off', true)")
        if chunk_ids:
            Chunk.objects.for_workspace(workspace).filter(pk__in=sorted(chunk_ids)).update(
                retrieved_count=F("retrieved_count") + 1, last_retrieved_at=now
            )
        if entity_ids:
            Entity.objects.for_workspace(workspace).filter(pk__in=sorted(entity_ids)).update(
                retrieved_count=F("retrieved_count") + 1, last_retrieved_at=now
            )
