"""Background tasks of the ingest app: ids in, reload, tolerate deletion, call an action."""

from __future__ import annotations

from django.tasks import task

from ingest.actions.crawl import do_run_crawl
from ingest.actions.pipeline import do_process_document, do_process_documents
from ingest.actions.sources import do_delete_source


@task
def process_document(document_id: int) -> str:
    return do_process_document(document_id=document_id)


@task
def process_documents(document_ids: list[int]) -> list[str]:
    return do_process_documents(document_ids=document_ids)


@task
def delete_source(source_id: int) -> bool:
    return do_delete_source(source_id=source_id)


@task
def crawl_source(source_id: int) -> str:
    return do_run_crawl(source_id=source_id)
