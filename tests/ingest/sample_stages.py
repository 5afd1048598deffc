"""A pipeline stage the slice tests add through INGEST_PIPELINE_STAGES, as an app would."""

from __future__ import annotations

from ingest.models import Document
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
