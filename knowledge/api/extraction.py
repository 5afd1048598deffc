"""Each source's extraction account (runs, tokens, cost), its estimate, a re-extraction
request, the workspace's token usage and its monthly LLM budget.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.http import HttpRequest
from ninja import Router, Status

from ingest.selectors import get_source_for_workspace
from knowledge.actions.extraction.documents import do_request_extraction
from knowledge.actions.extraction.estimate import estimate_source
from knowledge.actions.extraction.monthly_budget import do_set_workspace_llm_budget
from knowledge.schemas.extraction import (
    EstimateOut,
    ExtractIn,
    ExtractionOut,
    ExtractQueued,
    LlmBudgetIn,
    LlmBudgetOut,
    UsageOut,
)
from knowledge.selectors.extraction import get_extraction_summary, get_workspace_token_usage
from knowledge.selectors.llm_usage import get_llm_budget
from workspaces.auth import get_workspace_access
from workspaces.models import Role

router = Router(tags=["knowledge"])
# The operation ids clients generated code from (config/api.py).
OPERATION_ID_PREFIX = "knowledge_api"


@router.get(
    "/workspaces/{slug}/sources/{source_id}/extraction",
    response=ExtractionOut,
    summary="A source's extraction: extractor, status, runs, counts, tokens, cost",
)
def get_extraction(request: HttpRequest, slug: str, source_id: int) -> dict[str, Any]:
    """`offline` is true when the offline (spaCy) extractor produced the results: no LLM was
    configured. `status` budget_exceeded means the source's token budget stopped it."""
    workspace = get_workspace_access(request, slug).workspace
    source = get_source_for_workspace(workspace, source_id)
    return get_extraction_summary(workspace, source)


@router.get(
    "/workspaces/{slug}/sources/{source_id}/extraction/estimate",
    response=EstimateOut,
    summary="Tokens and cost of extracting the source now (nothing is called)",
)
def get_estimate(request: HttpRequest, slug: str, source_id: int) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug).workspace
    source = get_source_for_workspace(workspace, source_id)
    return estimate_source(source=source).as_dict()


@router.post(
    "/workspaces/{slug}/sources/{source_id}/extract",
    response={202: ExtractQueued},
    summary="Extract the source again in the background (cached windows cost nothing)",
)
def extract_source(
    request: HttpRequest, slug: str, source_id: int, payload: ExtractIn
) -> Status[dict[str, Any]]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    source = get_source_for_workspace(workspace, source_id)
    with transaction.atomic():
        do_request_extraction(source=source, force=payload.force)
    return Status(202, {"source_id": source.pk, "queued": True})


@router.get(
    "/workspaces/{slug}/usage", response=UsageOut, summary="LLM token usage of the workspace"
)
def get_usage(request: HttpRequest, slug: str) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug).workspace
    return get_workspace_token_usage(workspace)


@router.get(
    "/workspaces/{slug}/llm-budget",
    response=LlmBudgetOut,
    summary="The workspace's monthly LLM budget and what this month spent",
)
def get_workspace_llm_budget(request: HttpRequest, slug: str) -> dict[str, Any]:
    """Extraction pauses (documents wait, the source's extraction status is `paused`) once
    the month's LLM calls cost the budget, and goes on when it is raised or the month
    turns."""
    workspace = get_workspace_access(request, slug).workspace
    return get_llm_budget(workspace)


@router.patch(
    "/workspaces/{slug}/llm-budget",
    response=LlmBudgetOut,
    summary="Set the workspace's monthly LLM budget (admin)",
)
def set_workspace_llm_budget(
    request: HttpRequest, slug: str, payload: LlmBudgetIn
) -> dict[str, Any]:
    """`monthly_budget_usd`: an amount (0: no limit) or null (the server's default). When
    the new budget is not spent, extraction that paused at the old one resumes at once."""
    workspace = get_workspace_access(request, slug, role=Role.ADMIN).workspace
    workspace = do_set_workspace_llm_budget(workspace=workspace, amount=payload.monthly_budget_usd)
    return get_llm_budget(workspace)
