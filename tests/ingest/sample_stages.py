"""Pipeline stages the slice and pipeline tests add through INGEST_PIPELINE_STAGES, as an
app would."""

from __future__ import annotations

from ingest.actions.pipeline import StageReport
from ingest.models import Document, DocumentStatus
from ingest.stages import group_prepared


def _break(*, document_ids: list[int]) -> None:
    raise RuntimeError("the group step broke")


@group_prepared(_break)
def broken_group_step(*, document: Document) -> None:
    """Nothing per document; its group step fails outright, as a lost database would."""


# What the recording stages below saw, in order: (step, document id, the statuses of the
# group's documents at that moment).
seen: list[tuple[str, int, tuple[str, ...]]] = []


def _statuses(document_id: int) -> tuple[str, ...]:
    source_id = Document.objects.values_list("source_id", flat=True).get(pk=document_id)
    return tuple(
        Document.objects.filter(source_id=source_id).order_by("pk").values_list("status", flat=True)
    )


def _record_each(*, document_id: int) -> None:
    seen.append(("each", document_id, _statuses(document_id)))


def _record_group(*, document_ids: list[int]) -> None:
    seen.append(("group", 0, _statuses(document_ids[0])))


@group_prepared(_record_group, each=_record_each)
def recorded_each(*, document: Document) -> None:
    seen.append(("stage", document.pk, _statuses(document.pk)))


@group_prepared(_record_group, wanted=lambda: False)
def unwanted_group_step(*, document: Document) -> None:
    seen.append(("unwanted", document.pk, _statuses(document.pk)))


def _report_group(*, document_ids: list[int]) -> StageReport:
    embedded = sorted(
        Document.objects.filter(pk__in=document_ids, status=DocumentStatus.EMBEDDED).values_list(
            "pk", flat=True
        )
    )
    return StageReport(
        takes=DocumentStatus.EMBEDDED,
        reaches=DocumentStatus.EXTRACTED,
        done=tuple(embedded[1:]),
        failed={embedded[0]: "Reported: the first one failed"} if embedded else {},
    )


@group_prepared(_report_group)
def reporting(*, document: Document) -> StageReport | None:
    """A stage of an app built on ingest, like extraction: it writes no document row but
    reports; its group step fails the group's first document and finishes the others, and
    a document on its own is finished."""
    if document.status != DocumentStatus.EMBEDDED:
        return None
    return StageReport(
        takes=DocumentStatus.EMBEDDED, reaches=DocumentStatus.EXTRACTED, done=(document.pk,)
    )
