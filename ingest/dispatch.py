"""Documents go to the pipeline in groups of INGEST_DOCUMENTS_PER_TASK, however they go.

The chunks of a group are embedded in one length-sorted call (ingest/actions/pipeline.py),
so a worker task, a command processing inline and a crawl handing pages on all cut the same
groups. Tasks are enqueued by dotted path once the transaction commits (system/enqueue.py):
no action imports `ingest.tasks`, and the worker never sees an uncommitted document.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings

from system.enqueue import enqueue_on_commit


def document_groups(document_ids: Iterable[int]) -> list[list[int]]:
    """`document_ids` cut into the groups one pipeline run (one task) takes."""
    ids = list(document_ids)
    size = max(1, settings.INGEST_DOCUMENTS_PER_TASK)
    return [ids[start : start + size] for start in range(0, len(ids), size)]


def enqueue_documents(document_ids: Iterable[int]) -> None:
    """Process the documents in the worker, one task per group, after commit."""
    for group in document_groups(document_ids):
        enqueue_on_commit("ingest.tasks.process_documents", group)
