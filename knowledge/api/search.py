"""`POST /workspaces/{slug}/search`: hybrid retrieval (knowledge/retrieval/)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router

from knowledge.retrieval import SearchResult, hybrid_search
from knowledge.schemas.search import SearchIn, SearchOut
from system.metrics import observe_search
from workspaces.auth import get_workspace_access

router = Router(tags=["knowledge"])
# The operation ids clients generated code from (config/api.py).
OPERATION_ID_PREFIX = "knowledge_retrieval_api"


@router.post(
    "/workspaces/{slug}/search",
    response=SearchOut,
    summary="Hybrid search: ranked chunks, entities, relations, paths and an LLM context block",
)
def search(request: HttpRequest, slug: str, payload: SearchIn) -> SearchResult:
    """Vector search over chunks and entity names, full-text search, entities named in the
    query (names and aliases) and graph expansion from them, fused by weighted reciprocal
    rank fusion. Without an embedding model it runs without vectors and says so
    (`signals_used`, `warnings`). Any member may search; returned chunks and entities count
    as retrieved."""
    workspace = get_workspace_access(request, slug).workspace
    result = hybrid_search(
        workspace=workspace,
        query=payload.query,
        limit=payload.limit,
        hops=payload.hops,
        relation_types=payload.relation_types,
        entity_types=payload.entity_types,
        sources=payload.sources,
        ingested_from=payload.ingested_from,
        ingested_to=payload.ingested_to,
        published_from=payload.published_from,
        published_to=payload.published_to,
        recency=payload.recency,
    )
    observe_search(result.took_ms / 1000)
    return result
