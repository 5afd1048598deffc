"""Access counts: the one write of a search.

When a search records access, the returned chunks and entities get `retrieved_count += 1`
and `last_retrieved_at`, which pruning and "popular" views read. The search hands this to
the retrieval pool (knowledge/retrieval/pool.py) after building its answer.
"""

from __future__ import annotations

from django.db import connection
from django.utils import timezone

from workspaces.models import Workspace


def record_access_counts(workspace: Workspace, chunk_ids: list[int], entity_ids: list[int]) -> None:
    """retrieved_count += 1 and last_retrieved_at for what was returned, in a transaction
    that does not wait for its WAL flush: these are statistics, and losing the last few on
    a crash costs nothing, while waiting for the disk would dominate a search.

    One statement (both UPDATEs and the setting, ids sorted so concurrent searches lock rows
    in the same order): it runs beside the next searches on the pool, and the five round
    trips of a transaction (BEGIN, the setting, two UPDATEs, COMMIT) cost them CPU on a
    busy server. Alone, the statement is its own transaction; inside a caller's, part of it.
    """
    if not chunk_ids and not entity_ids:
        return
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            """
            WITH setting AS (SELECT set_config('synchronous_commit', 'off', true)),
            chunks AS (
                UPDATE ingest_chunk SET retrieved_count = retrieved_count + 1,
                       last_retrieved_at = %s
                WHERE workspace_id = %s AND id = ANY(%s::bigint[])
            ),
            entities AS (
                UPDATE knowledge_entity SET retrieved_count = retrieved_count + 1,
                       last_retrieved_at = %s
                WHERE workspace_id = %s AND id = ANY(%s::bigint[])
            )
            SELECT 1 FROM setting
            """,
            [now, workspace.pk, sorted(chunk_ids), now, workspace.pk, sorted(entity_ids)],
        )
