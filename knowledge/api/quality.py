"""The quality report: `GET /workspaces/{slug}/quality[?source=ID]` (members, viewers too).

The figures and the suspicious names of the workspace's graph, or of what one source
contributed to it (knowledge/selectors/quality.py says what each figure counts). Deleting
or blocking a suspicious name is the ordinary curation API (`DELETE entities/{id}`).
"""

# No `from __future__ import annotations`: ninja reads the parameters' annotations.
from typing import Annotated, Any

from django.http import HttpRequest
from ninja import Query, Router

from ingest.selectors import get_source_for_workspace
from knowledge.schemas.quality import QualityOut
from knowledge.selectors.quality import get_quality_report
from workspaces.auth import get_workspace_access
from workspaces.models import MAX_ID

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
