"""The entry points of extraction: a set of documents (the ingest pipeline's `extract`
stage, per document or per group), a whole source (re-extraction, run by a task), and the
request that enqueues that task.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.utils import timezone

from ingest.actions.pipeline import StageFailed
from ingest.models import Document, DocumentStatus, Source
from knowledge.actions.extraction.budget import add_counts, known_only, source_budget
from knowledge.actions.extraction.materialize import Materializer
from knowledge.actions.extraction.runs import Progress, document_windows, ensure_runs
from knowledge.actions.review import do_review_documents
from knowledge.actions.schema import (
    do_ensure_default_schema,
)
from knowledge.extraction.extractors import get_extractor
from knowledge.extraction.offline import OfflineExtractorUnavailable
from knowledge.models import (
    ExtractionStatus,
    SourceExtraction,
)
from knowledge.selectors.extraction import documents_for_extraction
from knowledge.selectors.schema import get_schema_snapshot
from system.enqueue import enqueue_on_commit


@dataclass(slots=True)
class ExtractionReport:
    documents: int = 0
    windows: int = 0
    cached: int = 0
    extracted: int = 0
    skipped_for_budget: int = 0
    error: str = ""
    extractor: str = ""
    model: str = ""


def do_extract_documents(
    *,
    documents: list[Document],
    force: bool = False,
    progress: Progress | None = None,
    on_windows: Callable[[int], None] | None = None,
) -> ExtractionReport:
    """Extract the given documents (one source or several) and record their evidence.

    Returns what happened; a failed LLM leaves the failing windows without runs (nothing is
    cached) and the report's `error` set; budget stops are reported, not raised.
    """
    report = ExtractionReport()
    if not documents:
        return report
    extractor = get_extractor()
    report.extractor, report.model = extractor.kind, extractor.model_id
    by_source: dict[int, list[Document]] = {}
    for document in documents:
        by_source.setdefault(document.source_id, []).append(document)
    for source_id, docs in by_source.items():
        source = Source.objects.select_related("workspace").get(pk=source_id)
        do_ensure_default_schema(workspace=source.workspace)
        schema = get_schema_snapshot(source.workspace)
        windows_by_doc = {doc.pk: document_windows(doc) for doc in docs}
        all_windows = [w for ws in windows_by_doc.values() for w in ws]
        if on_windows:
            on_windows(len({w.hash for w in all_windows}))
        for doc in docs:
            doc.workspace = source.workspace
        writer = Materializer(
            documents=docs,
            windows_by_doc=windows_by_doc,
            refresh_hashes={w.hash for w in all_windows} if force else set(),
            only_known=known_only(source),
        )
        ensured = ensure_runs(
            source=source,
            windows=all_windows,
            extractor=extractor,
            schema=schema,
            force=force,
            progress=progress,
            idle=writer.write_ready,
        )
        report.documents += len(docs)
        report.windows += len(all_windows)
        report.cached += ensured.cached
        report.extracted += ensured.extracted
        report.skipped_for_budget += ensured.skipped_for_budget
        report.error = report.error or ensured.error
        writer.write_ready(ensured, final=True)
        account = SourceExtraction.objects.filter(source=source).first()
        if account is not None:
            add_counts(account.pk, writer.counts)
    return report


def _extract_stage_documents(document_ids: list[int]) -> None:
    documents = list(
        Document.objects.filter(pk__in=document_ids, status=DocumentStatus.EMBEDDED).order_by("pk")
    )
    if not documents:
        return
    try:
        report = do_extract_documents(documents=documents)
    except OfflineExtractorUnavailable as exc:
        # Like a missing embedding model: ingestion goes on, the graph waits, and the
        # source says why (`manage.py extract` fills it in once the model is back).
        warning = f"No extraction: {exc}"[:2000]
        Source.objects.filter(pk__in={d.source_id for d in documents}).update(warning=warning)
        report = ExtractionReport()
    if report.error:
        message = f"Extraction failed: {report.error}"[:2000]
        Document.objects.filter(pk__in=[d.pk for d in documents]).update(
            status=DocumentStatus.FAILED, error=message
        )
        if len(documents) == 1:
            raise StageFailed(message)
        return
    Document.objects.filter(
        pk__in=[d.pk for d in documents], status=DocumentStatus.EMBEDDED
    ).update(status=DocumentStatus.EXTRACTED)


def extract_group(*, document_ids: list[int]) -> None:
    """The group step of the extract stage: all windows of the group go out together."""
    _extract_stage_documents(document_ids)


def extract_document(*, document: Document) -> None:
    if document.status != DocumentStatus.EMBEDDED:
        return
    _extract_stage_documents([document.pk])
    document.refresh_from_db(fields=["status", "error"])


def do_extract_source(
    *,
    source: Source,
    force: bool = False,
    progress: Progress | None = None,
    on_windows: Callable[[int], None] | None = None,
) -> ExtractionReport:
    """(Re-)extract a source's processed documents: cached windows cost nothing, so this is
    how a source continues after its budget was raised or its LLM came back."""
    documents = documents_for_extraction(workspace=source.workspace, source=source)
    if source_budget(source) is not None:
        SourceExtraction.objects.filter(
            source=source, status=ExtractionStatus.BUDGET_EXCEEDED
        ).update(status=ExtractionStatus.RUNNING, message="")
    SourceExtraction.objects.filter(source=source, status=ExtractionStatus.FAILED).update(
        status=ExtractionStatus.RUNNING, message=""
    )
    report = do_extract_documents(
        documents=documents, force=force, progress=progress, on_windows=on_windows
    )
    # What the pipeline's `consolidate` stage does after ingestion, for the whole source.
    do_review_documents(documents=documents)
    if not report.error and not report.skipped_for_budget:
        SourceExtraction.objects.filter(source=source).update(
            status=ExtractionStatus.DONE, finished_at=timezone.now()
        )
        Source.objects.filter(pk=source.pk, warning__startswith="Stopped: the token budget").update(
            warning=""
        )
    return report


def do_request_extraction(*, source: Source, force: bool = False) -> None:
    """Queue `do_extract_source` for the worker (after commit)."""
    enqueue_on_commit("knowledge.tasks.extract_source", source.pk, force)
