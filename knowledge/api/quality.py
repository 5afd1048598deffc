"""The quality report: `GET /workspaces/{slug}/quality[?source=ID]` (members, viewers too).

The figures and the suspicious names of the workspace's graph, or of what one source
contributed to it (knowledge/selectors/quality.py says what each figure counts). Deleting
or blocking a suspicious name is the ordinary curation API (`DELETE entities/{id}`).

A source's learnt section labels (knowledge/selectors/section_labels.py):
`GET /workspaces/{slug}/sources/{id}/section-labels` (members), and a person's word on one,
`PUT` the same path (editors), which takes effect when the source is extracted again.
"""

# No `from __future__ import annotations`: ninja reads the parameters' annotations.
from typing import Annotated, Any

from django.http import HttpRequest
from ninja import Query, Router

from ingest.models import Source
from ingest.selectors import get_source_for_workspace
from knowledge.actions.extraction.section_labels import do_set_section_label
from knowledge.schemas.quality import QualityOut, SectionLabelIn, SectionLabelsOut
from knowledge.selectors.quality import get_quality_report
from knowledge.selectors.section_labels import (
    MIN_DOCUMENTS,
    MIN_SHARE,
    SectionLabel,
    section_labels,
)
from workspaces.auth import get_workspace_access
from workspaces.models import MAX_ID, Role, Workspace

router = Router(tags=["knowledge"])
# The operation ids' prefix, as for the other knowledge modules (config/api.py).
OPERATION_ID_PREFIX = "knowledge_api"


@router.get(
    "/workspaces/{slug}/quality",
    response=QualityOut,
    summary="Quality report: coverage, singletons, orphans, density, typed relations, noise",
)
def quality(
    request: HttpRequest,
    slug: str,
    source: Annotated[
        int | None, Query(ge=1, le=MAX_ID, description="only what this source contributed")
    ] = None,
) -> dict[str, Any]:
    """Shares of entities seen in 2+ chunks, singletons and orphans; entities per 1,000
    words; the typed-relation share; boilerplate chunks skipped; and up to 20 suspicious
    names (most mentioned first) with the reason each looks like noise."""
    workspace = get_workspace_access(request, slug).workspace
    scope = get_source_for_workspace(workspace, source) if source is not None else None
    return get_quality_report(workspace, source=scope)


@router.get(
    "/workspaces/{slug}/sources/{source_id}/section-labels",
    response=SectionLabelsOut,
    summary="A source's learnt section labels (its structure, never entities) and overrides",
)
def get_section_labels(request: HttpRequest, slug: str, source_id: int) -> dict[str, Any]:
    """Headings that head a section in enough of the source's documents, most common first,
    then labels a person added; `structure` says what extraction does with each."""
    workspace = get_workspace_access(request, slug).workspace
    return _labels(workspace, get_source_for_workspace(workspace, source_id))


@router.put(
    "/workspaces/{slug}/sources/{source_id}/section-labels",
    response=SectionLabelsOut,
    summary="Say a label is structure, not structure, or back to the counts (editors)",
)
def put_section_label(
    request: HttpRequest, slug: str, source_id: int, payload: SectionLabelIn
) -> dict[str, Any]:
    """Takes effect when the source is extracted again (`POST …/extract` with force)."""
    access = get_workspace_access(request, slug, role=Role.EDITOR)
    source = get_source_for_workspace(access.workspace, source_id)
    do_set_section_label(
        workspace=access.workspace, source=source, label=payload.label,
        structure=payload.structure, actor=request.user,
    )  # fmt: skip
    return _labels(access.workspace, source)


def _labels(workspace: Workspace, source: Source) -> dict[str, Any]:
    return {
        "source": {"id": source.pk, "name": source.name},
        "min_documents": MIN_DOCUMENTS,
        "min_share": MIN_SHARE,
        "labels": [_label(label) for label in section_labels(workspace, source)],
    }


def _label(label: SectionLabel) -> dict[str, Any]:
    return {
        "key": label.key,
        "text": label.text,
        "documents": label.documents,
        "learnt": label.learnt,
        "override": label.override,
        "structure": label.structure,
    }
