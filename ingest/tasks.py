"""Background tasks of the ingest app: ids in, reload, tolerate deletion, call an action."""

from __future__ import annotations

from django.tasks import task

from ingest.actions.pipeline import do_process_document
from ingest.actions.slices import do_crawl_slice, do_process_slice
from ingest.actions.sources import do_delete_source


@task
def process_document(document_id: int) -> str:
    return do_process_document(document_id=document_id)


@task
def process_documents(
    document_ids: list[int], source_id: int | None = None, attempt: int = 0
) -> list[str]:
    """One slice of the documents' work; the rest is queued as a new task
    (ingest/actions/slices.py)."""
    return do_process_slice(document_ids=document_ids, source_id=source_id, attempt=attempt)


@task
def delete_source(source_id: int) -> bool:
    return do_delete_source(source_id=source_id)


@task
def crawl_source(source_id: int) -> str:
    """One slice of the crawl; the rest is queued as a new task."""
    return do_crawl_slice(source_id=source_id)
