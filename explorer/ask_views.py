"""The Ask page: a question in the URL (so results can be shared) answered with ranked
passages, the entities, relations and paths behind them, and a link that shows them in the
explorer. Server-rendered from hybrid search, so it works without JavaScript and without an
LLM; every piece of document text reaches the template as plain strings (autoescaped), with
the query terms split out for the template to mark, never as HTML built here."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import URLPattern, path
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from explorer.graph_views import document_link
from explorer.workspace_pages import workspace_page
from ingest.models import Document
from knowledge.retrieval.search import hybrid_search
from system.selectors import llm_is_configured
from workspaces.errors import InvalidInput
from workspaces.models import Workspace

MAX_QUESTION = 2000
PASSAGES = 8
_WORD = re.compile(r"\w{3,}")
# Question words not worth marking in a passage.
_COMMON = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "what",
        "who",
        "whom",
        "whose",
        "which",
        "when",
        "where",
        "why",
        "how",
        "are",
        "was",
        "were",
        "does",
        "did",
        "has",
        "have",
        "had",
        "this",
        "that",
        "these",
        "those",
        "from",
        "into",
        "about",
        "not",
    ]
)


def _ids(raw: str) -> list[int]:
    return [int(part) for part in raw.split(",") if part.strip().isdigit()][:50]


def _day(raw: str) -> date | None:
    try:
        return date.fromisoformat(raw)
    except ValueError:
        return None


def _dated(
    workspace: Workspace, chunks: list[Any], start: date | None, end: date | None
) -> list[Any]:
    """The chunks whose document was ingested within [start, end] (days, inclusive)."""
    if start is None and end is None:
        return chunks
    documents = Document.objects.filter(workspace=workspace, pk__in={c.document_id for c in chunks})
    if start is not None:
        documents = documents.filter(created_at__date__gte=start)
    if end is not None:
        documents = documents.filter(created_at__date__lte=end)
    kept = set(documents.values_list("pk", flat=True))
    return [c for c in chunks if c.document_id in kept]


def _pieces(text: str, terms: set[str]) -> list[dict[str, Any]]:
    """`text` cut into pieces, each marked when it is one of the query `terms`."""
    if not terms:
        return [{"text": text, "match": False}]
    alternatives = "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True))
    pattern = re.compile(rf"\b(?:{alternatives})\b", re.I)
    pieces: list[dict[str, Any]] = []
    last = 0
    for found in pattern.finditer(text):
        if found.start() > last:
            pieces.append({"text": text[last : found.start()], "match": False})
        pieces.append({"text": found.group(0), "match": True})
        last = found.end()
    if last < len(text):
        pieces.append({"text": text[last:], "match": False})
    return pieces


def _results(
    workspace: Workspace,
    question: str,
    sources: list[int],
    types: list[str],
    days: tuple[date | None, date | None] = (None, None),
) -> dict[str, Any]:
    result = hybrid_search(
        workspace=workspace,
        query=question,
        limit=PASSAGES,
        sources=sources or None,
        entity_types=types or None,
        record_access=False,
    )
    terms = {w.lower() for w in _WORD.findall(question)} - _COMMON
    entity_ids = [entity.id for entity in result.entities]
    graph_query = {"ws": workspace.slug, "seeds": ",".join(map(str, entity_ids[:20]))}
    if entity_ids:
        graph_query["focus"] = str(entity_ids[0])
    return {
        "passages": [
            {
                "n": n,
                "hit": hit,
                "pieces": _pieces(hit.text, terms),
                "link": document_link(workspace, hit.document_id, hit.char_start, hit.char_end),
            }
            for n, hit in enumerate(_dated(workspace, result.chunks, *days), start=1)
        ],
        "entities": result.entities,
        "relations": result.relations,
        "paths": [[node.name for node in p.nodes] for p in result.paths],
        "graph_link": f"/explore/?{urlencode(graph_query)}" if entity_ids else "",
        "warnings": result.warnings,
    }


@require_GET
@workspace_page()
def ask(request: HttpRequest) -> HttpResponse:
    """The question box, and for `?q=` the passages that answer it."""
    workspace: Workspace = request.membership.workspace  # type: ignore[attr-defined]
    question = request.GET.get("q", "").strip()[:MAX_QUESTION]
    sources = _ids(request.GET.get("sources", ""))
    types = [t for t in request.GET.get("types", "").split(",") if t.strip()][:20]
    context: dict[str, Any] = {
        "nav": "ask",
        "workspace": workspace,
        "q": question,
        "error": "",
        "llm_configured": llm_is_configured(),
    }
    if question:
        try:
            days = (_day(request.GET.get("from", "")), _day(request.GET.get("to", "")))
            context.update(_results(workspace, question, sources, types, days))
        except InvalidInput as error:
            context["error"] = str(error)
    return render(request, "explorer/ask/ask.html", context)


urlpatterns: list[URLPattern] = [path("ask/", ask, name="ask")]
