"""A pipeline stage the slice tests add through INGEST_PIPELINE_STAGES, as an app would."""

from __future__ import annotations

from ingest.models import Document
from ingest.stages import group_prepared


def _break(*, document_ids: list[int]) -> None:
    raise RuntimeError("the group step broke")


@group_prepared(_break)
def broken_group_step(*, document: Document) -> None:
    """Nothing per document; its group step fails outright, as a lost database would."""
