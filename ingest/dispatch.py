"""Hand work to the task worker, after the transaction that created it commits.

Actions call these instead of importing `ingest.tasks` (which imports the actions): the
worker must never see a document id whose row is not committed yet.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from django.conf import settings
from django.db import transaction


def _enqueue_documents(ids: list[int]) -> None:
    from ingest.tasks import process_documents

    size = max(1, settings.INGEST_DOCUMENTS_PER_TASK)
    for start in range(0, len(ids), size):
        process_documents.enqueue(ids[start : start + size])


def enqueue_documents(document_ids: Iterable[int]) -> None:
    ids = list(document_ids)
    if ids:
        transaction.on_commit(partial(_enqueue_documents, ids))


def _enqueue_source_deletion(source_id: int) -> None:
    from ingest.tasks import delete_source

    delete_source.enqueue(source_id)


def enqueue_source_deletion(source_id: int) -> None:
    transaction.on_commit(partial(_enqueue_source_deletion, source_id))


def _enqueue_crawl(source_id: int) -> None:
    from ingest.tasks import crawl_source

    crawl_source.enqueue(source_id)


def enqueue_crawl(source_id: int) -> None:
    transaction.on_commit(partial(_enqueue_crawl, source_id))
