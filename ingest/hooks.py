"""What the ingest app plugs into the seams of the apps below it, all in one place: each
function here is named by a dotted path in settings (config/settings/base.py), which the
lower app loads lazily, never importing ingest.

- WORKSPACE_DELETION_HOOKS: `purge_workspace`, the app's rows and blobs when a workspace
  is deleted (workspaces/actions/workspaces.py).
- UPKEEP_JOBS (system/upkeep.py): `requeue_stranded_work` (`stranded_work`: no source's
  work is left waiting with nothing queued to do it), `maintain_vector_indexes`
  (`vector_indexes`, run by knowledge's job for both tables: workspaces large enough get
  vector indexes of their own) and `queue_due_recrawls` (`recrawl`: crawl sources whose
  refresh interval is due start a new round).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence

from django.conf import settings

from ingest import blobs
from ingest.actions.crawl import do_queue_due_recrawls
from ingest.actions.slices import do_requeue_stranded_work
from ingest.actions.vector_indexes import (
    do_create_workspace_vector_index,
    do_drop_vector_index,
    do_drop_workspace_vector_indexes,
)
from ingest.models import Document
from ingest.selectors import vector_indexes, vector_rows_by_workspace, vector_rows_of_dimension
from ingest.vector_tables import CHUNK_VECTORS, VectorTable
from system import slices
from system.upkeep import JobOutcome
from workspaces.actions.workspaces import DeletionProgress, purge_workspace_rows, tenant_models

# --- workspace deletion (WORKSPACE_DELETION_HOOKS) -----------------------------------------


def purge_workspace(
    *, workspace_id: int, batch_size: int, progress: DeletionProgress | None = None
) -> None:
    """Delete the workspace's sources, documents and chunks in batches (children first),
    then its blobs: the files its documents named, and its blob directory with whatever an
    interrupted run or upload left there. Blobs are stored per workspace
    (`blobs/<workspace id>/`), so no other workspace loses a file. Last, the workspace's
    own chunk vector index, if it had one (ingest/actions/vector_indexes.py)."""
    names = set(
        Document.objects.filter(workspace_id=workspace_id)
        .exclude(blob="")
        .values_list("blob", flat=True)
    )
    purge_workspace_rows(
        workspace_id=workspace_id,
        models=tenant_models("ingest"),
        batch_size=batch_size,
        progress=progress,
    )
    blobs.delete_blobs(names)
    shutil.rmtree(blobs.blob_path(f"blobs/{workspace_id}"), ignore_errors=True)
    do_drop_workspace_vector_indexes(workspace_id=workspace_id)


# --- scheduled upkeep (UPKEEP_JOBS) --------------------------------------------------------


def requeue_stranded_work() -> JobOutcome:
    """Slices hand their rest on, retry what failed outright and are handed back by a
    stopping worker or by the heartbeat check (ingest/actions/slices.py, system/worker.py).
    What is left is what none of those can see: a task that failed before its slice began
    (the database went away between the claim and the first query), one removed from the
    queue by hand, a queue restored from an older backup; and documents a stage left
    waiting (extraction paused by the workspace's monthly LLM budget: they go on once it
    is no longer spent). This finds running sources with documents or pages waiting and no
    task of theirs queued or running, and queues their work again."""
    requeued = do_requeue_stranded_work()
    if not requeued:
        return JobOutcome.ok("no waiting work without a task")
    documents = sum(requeued.values())
    return JobOutcome.ok(
        f"queued again the waiting work of {len(requeued)} source(s) ({documents} document(s))",
        {"sources": {str(pk): count for pk, count in requeued.items()}},
    )


def queue_due_recrawls() -> JobOutcome:
    """Start a new round of each crawl source whose refresh interval is due (`refresh_every`,
    `next_run_at`; ingest/actions/crawl/schedule.py): its crawl task takes its turn in the
    queue like any other. Each due source is claimed by one caller only, so two runs of
    this job at once (two workers) start it once; a source still running is not due."""
    queued = do_queue_due_recrawls()
    details = {"started": queued.started, "refused": {str(k): v for k, v in queued.refused.items()}}
    message = f"{len(queued.started)} scheduled re-crawl(s) started"
    if queued.refused:
        message += f", {len(queued.refused)} refused"
    return JobOutcome.ok(message, details)


def maintain_vector_indexes(tables: Sequence[VectorTable] = (CHUNK_VECTORS,)) -> JobOutcome:
    """Give each workspace above VECTOR_EXACT_MAX_ROWS rows of a table (and at most
    VECTOR_WORKSPACE_INDEX_MAX_SHARE of the table's rows) its own HNSW index per vector
    dimension in use, smallest workspaces first; drop the indexes of workspaces gone or
    shrunk to half the bound, and rebuild any a stopped build left invalid or that was built
    with another VECTOR_WORKSPACE_INDEX_EF_CONSTRUCTION
    (ingest/actions/vector_indexes.py). A worker's stop ends the run between builds. The
    `vector_indexes` job runs it for chunks and entity names (knowledge/hooks.py)."""
    max_share = settings.VECTOR_WORKSPACE_INDEX_MAX_SHARE
    if max_share <= 0:
        return _drop_all(tables)
    bound = settings.VECTOR_EXACT_MAX_ROWS
    built: list[str] = []
    dropped: list[str] = []
    in_place = 0
    for vectors in tables:
        counts = vector_rows_by_workspace(vectors)
        dimensions, existing = vector_indexes(vectors)
        kept: set[tuple[int, int]] = set()
        for index in existing:
            rows = counts.get(index.workspace_id, 0)
            if (
                index.valid
                and index.dimension in dimensions
                and rows > bound // 2
                and index.ef_construction == settings.VECTOR_WORKSPACE_INDEX_EF_CONSTRUCTION
            ):
                kept.add((index.workspace_id, index.dimension))
            else:
                do_drop_vector_index(name=index.name)
                dropped.append(index.name)
        new = _build_missing(vectors, counts, dimensions, kept, bound=bound, max_share=max_share)
        built += new
        in_place += len(kept) + len(new)
    return JobOutcome.ok(
        f"{len(built)} workspace vector index(es) built, {len(dropped)} dropped, "
        f"{in_place} in place",
        {"built": built, "dropped": dropped, "exact_max_rows": bound},
    )


def _drop_all(tables: Sequence[VectorTable]) -> JobOutcome:
    """Turned off: no workspace index is wanted, including those built while it was on."""
    names = [index.name for vectors in tables for index in vector_indexes(vectors)[1]]
    for name in names:
        do_drop_vector_index(name=name)
    return JobOutcome.skipped(
        f"VECTOR_WORKSPACE_INDEX_MAX_SHARE is 0: no workspace indexes ({len(names)} dropped)",
        {"dropped": names},
    )


def _build_missing(
    vectors: VectorTable,
    counts: dict[int, int],
    dimensions: list[int],
    kept: set[tuple[int, int]],
    *,
    bound: int,
    max_share: float,
) -> list[str]:
    total = sum(counts.values())
    built: list[str] = []
    for workspace_id, rows in sorted(counts.items(), key=lambda item: (item[1], item[0])):
        if rows <= bound or rows > max_share * total:
            continue
        for dimension in dimensions:
            if (workspace_id, dimension) in kept or vector_rows_of_dimension(
                vectors, workspace_id=workspace_id, dimension=dimension, at_most=bound + 1
            ) <= bound:
                continue
            if slices.shutdown_requested():
                return built
            built.append(
                do_create_workspace_vector_index(
                    workspace_id=workspace_id, dimension=dimension, vectors=vectors
                )
            )
    return built
