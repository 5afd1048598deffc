"""The entry points of extraction: a set of documents (the ingest pipeline's `extract`
stage, per document or per group), a whole source (re-extraction, run by a task), and the
request that enqueues that task.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.utils import timezone

from ingest.actions.activity import ActivityCounter
from ingest.actions.pipeline import StageFailed, StageReport, TopicVerdict
from ingest.models import Document, DocumentStatus, Source
from knowledge.actions.extraction.budget import add_counts, known_only, source_budget
from knowledge.actions.extraction.materialize import Materializer
from knowledge.actions.extraction.monthly_budget import (
    MonthlyBudget,
    do_clear_pause,
    do_pause_extraction,
)
from knowledge.actions.extraction.relevance import judge_documents
from knowledge.actions.extraction.runs import Progress, document_windows, ensure_runs
from knowledge.actions.review import do_review_documents
from knowledge.actions.schema import (
    do_ensure_default_schema,
)
from knowledge.extraction.extractors import get_extractor
from knowledge.extraction.offline import OfflineExtractorUnavailable
from knowledge.extraction.windows import Window
from knowledge.models import (
    ExtractionStatus,
    Mention,
    RelationEvidence,
    SourceExtraction,
)
from knowledge.selectors.extraction import documents_for_extraction
from knowledge.selectors.schema import get_schema_snapshot
from knowledge.selectors.section_labels import structure_label_keys
from system.enqueue import enqueue_on_commit
from system.llm.availability import extraction_uses_llm


@dataclass(slots=True)
class ExtractionReport:
    documents: int = 0
    windows: int = 0
    cached: int = 0
    extracted: int = 0
    skipped_for_budget: int = 0
    error: str = ""  # the first failure, if any
    extractor: str = ""
    model: str = ""
    # Document id -> why it could not be extracted: one of its windows failed (or was not
    # sent once extraction stopped). Only these documents failed; the others are written.
    failed: dict[int, str] = field(default_factory=dict)
    # Document id -> why it waits: windows of it were not sent because the workspace's
    # monthly LLM budget is spent. Neither written nor failed; extracted when it goes on.
    waiting: dict[int, str] = field(default_factory=dict)
    # Document id -> how near it is to its source's topic (sources with one), and whether
    # it was left out as off topic: kept as a document, not extracted.
    topic: dict[int, TopicVerdict] = field(default_factory=dict)
    off_topic: int = 0
    # Windows of known-only sources that named no known entity or alias: not sent.
    skipped_unknown: int = 0


def do_extract_documents(
    *,
    documents: list[Document],
    force: bool = False,
    progress: Progress | None = None,
    on_windows: Callable[[int], None] | None = None,
) -> ExtractionReport:
    """Extract the given documents (one source or several) and record their evidence.

    Returns what happened. Failures are local: a window that fails (after the client's
    retries) is left without a run (nothing cached) and fails its own documents only
    (`report.failed`, whose graph is left as it was), while every other document is
    written; a retry sends only the failed windows, the others being cached. Budget stops
    are reported, not raised: a source's token budget ends its extraction
    (`skipped_for_budget`), the workspace's monthly LLM budget leaves the documents with
    windows unsent waiting (`report.waiting`, neither written nor failed). Documents of a
    source with a topic that are not about it are not extracted (`report.topic`,
    `report.off_topic`); windows of a known-only source that name nothing known are not
    sent (`report.skipped_unknown`).
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
        docs, given_back = _on_topic(source, docs, report)
        windows_by_doc = {doc.pk: document_windows(doc) for doc in docs}
        # Off-topic documents extracted before (their content or the topic changed) give
        # their evidence back: written with no window, the write funnel removes it.
        windows_by_doc.update({doc.pk: [] for doc in given_back})
        docs = docs + given_back
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
            structure=structure_label_keys(source.workspace, source),
        )
        ensured = ensure_runs(
            source=source,
            windows=all_windows,
            extractor=extractor,
            schema=schema,
            force=force,
            progress=progress,
            idle=writer.write_ready,
            known_only=writer.only_known,
        )
        report.documents += len(docs)
        report.windows += len(all_windows)
        report.cached += ensured.cached
        report.extracted += ensured.extracted
        report.skipped_for_budget += ensured.skipped_for_budget
        report.skipped_unknown += len(ensured.skipped_unknown)
        report.error = report.error or ensured.error
        failed = _failed_documents(windows_by_doc, ensured.failed)
        report.failed.update(failed)
        waiting = {
            document_id: ensured.paused_reason
            for document_id, windows in windows_by_doc.items()
            if document_id not in failed and any(w.hash in ensured.paused for w in windows)
        }
        report.waiting.update(waiting)
        # A document with a failed window is not written (its evidence stays as it was),
        # nor one still waiting for the budget; every complete one already was, or is now.
        writer.waiting = [d for d in writer.waiting if d.pk not in failed and d.pk not in waiting]
        writer.write_ready(ensured, final=True)
        if ensured.paused_reason:
            do_pause_extraction(source=source, message=ensured.paused_reason)
        account = SourceExtraction.objects.filter(source=source).first()
        if account is not None:
            add_counts(account.pk, writer.counts)
    return report


def _on_topic(
    source: Source, documents: list[Document], report: ExtractionReport
) -> tuple[list[Document], list[Document]]:
    """(the documents to extract, the off-topic ones with evidence to give back); each
    measured document's verdict goes to the report. A source without a topic extracts
    every document, and clears a verdict a document kept from when it had one."""
    relevance = judge_documents(source, documents)
    if not relevance:
        for document in documents:
            if document.off_topic or document.topic_similarity is not None:
                report.topic[document.pk] = TopicVerdict(similarity=None, off_topic=False)
        return documents, []
    kept: list[Document] = []
    off: list[Document] = []
    for document in documents:
        verdict = relevance[document.pk]
        report.topic[document.pk] = TopicVerdict(
            similarity=verdict.similarity, off_topic=not verdict.on_topic
        )
        (kept if verdict.on_topic else off).append(document)
    report.off_topic += len(off)
    with_evidence = set(
        Mention.objects.filter(chunk__document__in=off).values_list("chunk__document_id", flat=True)
    ) | set(
        RelationEvidence.objects.filter(chunk__document__in=off).values_list(
            "chunk__document_id", flat=True
        )
    )
    return kept, [d for d in off if d.pk in with_evidence]


def _failed_documents(
    windows_by_doc: dict[int, list[Window]], failed: dict[str, str]
) -> dict[int, str]:
    """Document id -> the error of its first window without a run because it failed."""
    if not failed:
        return {}
    return {
        document_id: next(failed[w.hash] for w in windows if w.hash in failed)
        for document_id, windows in windows_by_doc.items()
        if any(w.hash in failed for w in windows)
    }


def _extract_stage_documents(document_ids: list[int]) -> StageReport:
    """Extract the documents of the group that are embedded: each that one of its windows
    failed for fails alone, with that error; the others are extracted. The pipeline moves
    them (the report); this writes no document row."""
    documents = list(
        Document.objects.filter(pk__in=document_ids, status=DocumentStatus.EMBEDDED).order_by("pk")
    )
    if not documents:
        return _stage_report()
    waiting = _waiting_for_budget(documents)
    if waiting:
        return _stage_report(waiting=waiting)
    activity = _WindowActivity(documents)
    try:
        report = do_extract_documents(
            documents=documents, progress=activity.finished, on_windows=activity.start
        )
    except OfflineExtractorUnavailable as exc:
        # Like a missing embedding model: ingestion goes on, the graph waits, and the
        # source says why (`manage.py extract` fills it in once the model is back).
        warning = f"No extraction: {exc}"[:2000]
        Source.objects.filter(pk__in={d.source_id for d in documents}).update(warning=warning)
        report = ExtractionReport()
    errors = {pk: f"Extraction failed: {error}"[:2000] for pk, error in report.failed.items()}
    failing = {d.source_id for d in documents if d.pk in errors}
    _clear_recovered_failures({d.source_id for d in documents if d.pk not in errors} - failing)
    return _stage_report(
        done=tuple(d.pk for d in documents if d.pk not in errors and d.pk not in report.waiting),
        failed=errors,
        waiting=report.waiting,
        topic=report.topic,
    )


def _waiting_for_budget(documents: list[Document]) -> dict[int, str]:
    """With the LLM extracting: when the workspace's monthly LLM budget is spent, every
    document waits (one query, before any window is built), and their sources say so;
    when it is not, a pause the sources were in is over."""
    if not extraction_uses_llm():
        return {}
    source_ids = sorted({d.source_id for d in documents})
    sources = list(Source.objects.select_related("workspace").filter(pk__in=source_ids))
    if not sources:
        return {}
    budget = MonthlyBudget.of(sources[0].workspace)
    if not budget.spent_out():
        for source in sources:
            do_clear_pause(source=source)
        return {}
    message = budget.pause_message()
    for source in sources:
        do_pause_extraction(source=source, message=message)
    return {d.pk: message for d in documents}


def _stage_report(
    done: tuple[int, ...] = (),
    failed: dict[int, str] | None = None,
    waiting: dict[int, str] | None = None,
    topic: dict[int, TopicVerdict] | None = None,
) -> StageReport:
    """What the extract stage did, for the pipeline to record: embedded documents are
    extracted or failed, or wait for the workspace's monthly LLM budget."""
    return StageReport(
        takes=DocumentStatus.EMBEDDED,
        reaches=DocumentStatus.EXTRACTED,
        done=done,
        failed=failed or {},
        waiting=waiting or {},
        topic=topic or {},
    )


class _WindowActivity:
    """Live progress of the extract stage: windows extracted of the group's windows
    (ingest/actions/activity.py), reported for the group's first source."""

    def __init__(self, documents: list[Document]) -> None:
        self.source_id = documents[0].source_id
        self.document = documents[0].title or documents[0].path if len(documents) == 1 else ""
        self.counter: ActivityCounter | None = None

    def start(self, windows: int) -> None:
        if self.counter is None:
            self.counter = ActivityCounter(
                source_id=self.source_id,
                stage="extracting",
                unit="windows",
                total=windows,
                document=self.document,
            )

    def finished(self, windows: int) -> None:
        if self.counter is not None:
            self.counter(windows)


def _clear_recovered_failures(source_ids: set[int]) -> None:
    """A source's account says its extraction failed while a document of it is failed;
    once none is (a retry extracted them), it runs on again. The caller leaves out the
    sources of documents failing now (the pipeline records their failure after)."""
    for source_id in source_ids:
        if not Document.objects.filter(source_id=source_id, status=DocumentStatus.FAILED).exists():
            SourceExtraction.objects.filter(
                source_id=source_id, status=ExtractionStatus.FAILED
            ).update(status=ExtractionStatus.RUNNING, message="")


def extract_group(*, document_ids: list[int]) -> StageReport:
    """The group step of the extract stage: all windows of the group go out together; a
    document whose window failed fails alone (reported: the pipeline fails it, then leaves
    it be)."""
    return _extract_stage_documents(document_ids)


def extract_document(*, document: Document) -> StageReport | None:
    """The extract stage of one embedded document: reported extracted (or waiting for the
    monthly budget), or StageFailed."""
    if document.status != DocumentStatus.EMBEDDED:
        return None
    report = _extract_stage_documents([document.pk])
    if document.pk in report.failed:
        raise StageFailed(report.failed[document.pk])
    return report


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
    if not report.error and not report.skipped_for_budget and not report.waiting:
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
