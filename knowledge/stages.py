"""Pipeline hooks the knowledge app contributes to ingestion (see INGEST_PIPELINE_STAGES
and INGEST_DELETION_HOOKS in config/settings/base.py).

`extract` takes an embedded document through extraction (with an LLM, its group step sends
the windows of a whole group of documents out together) and reports what it extracted and
what failed: the pipeline moves the documents (ingest/actions/pipeline.py, `StageReport`);
`consolidate` puts what extraction left in doubt to the LLM (knowledge/actions/review.py);
`forget_chunks` takes back the evidence of chunks before the ingest app deletes them;
`chunks_moved` refreshes what evidence derives from its chunks' documents after chunks moved
to another one (INGEST_CHUNK_MOVE_HOOKS).
"""

from __future__ import annotations

from ingest.actions.vector_indexes import do_drop_workspace_vector_indexes
from ingest.models import Document
from ingest.stages import group_prepared
from knowledge.actions.evidence import do_forget_chunks, do_refresh_moved_chunks
from knowledge.actions.extraction.documents import extract_document, extract_group
from knowledge.actions.review import do_review_documents
from knowledge.graph import get_graph_backend
from knowledge.graph.sync import projection_aliases
from knowledge.models import ENTITY_VECTORS
from system.selectors import llm_is_configured
from workspaces.actions.workspaces import DeletionProgress, purge_workspace_rows, tenant_models

# The group step sends a whole group's windows to the LLM concurrently; the offline
# extractor takes windows one by one either way, so each document goes on alone (extracted
# while the group's next documents are still being embedded: ingest/embedding_lane.py).
extract = group_prepared(extract_group, wanted=llm_is_configured)(extract_document)


def consolidate(*, document: Document) -> None:
    """After extraction: the LLM's review of doubtful pairs among the document's entities
    and summaries of descriptions grown long (nothing without an LLM)."""
    do_review_documents(documents=[document])


def forget_chunks(*, chunk_ids: list[int]) -> None:
    do_forget_chunks(chunk_ids=chunk_ids)


def chunks_moved(*, chunk_ids: list[int]) -> None:
    do_refresh_moved_chunks(chunk_ids=chunk_ids)


def purge_workspace(
    *, workspace_id: int, batch_size: int, progress: DeletionProgress | None = None
) -> None:
    """Delete the workspace's knowledge rows in batches, children first (evidence and
    mentions, relations, entities, and the types their PROTECTed foreign keys hold last),
    then clear its graph projections, after the rows: a write-through that slipped in
    meanwhile finds nothing left to push. A projection that cannot be cleared raises: the
    deletion stops there and the next run (resumable) clears it. Last, the workspace's own
    name vector index, if it had one."""
    purge_workspace_rows(
        workspace_id=workspace_id,
        models=tenant_models("knowledge"),
        batch_size=batch_size,
        progress=progress,
    )
    for alias in projection_aliases():
        get_graph_backend(alias).clear_workspace(workspace_id=workspace_id)
    do_drop_workspace_vector_indexes(workspace_id=workspace_id, vectors=ENTITY_VECTORS)
