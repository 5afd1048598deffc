"""The Ask page: a question and its filters (sources, entity types, ingestion and document
date ranges, mode) in
the URL, so results can be shared, answered with ranked passages, the entities, relations
and paths behind them (chips that open their panels in the page), and a link that shows
them in the explorer; and the explorer's Ask box, the same passages in its side panel.

Server-rendered from hybrid search, so it works without JavaScript and without an LLM;
every piece of document text reaches the template as plain strings (autoescaped), with the
query terms split out for the template to mark, never as HTML built here. With an LLM, the
page's script streams the answer from the ask API (knowledge/api/ask.py) above them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any
from urllib.parse import quote

from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path, reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from explorer.graph_views import MAX_SOURCE_CHOICES, document_link
from explorer.workspace_pages import WorkspaceRequest, workspace_page
from ingest.selectors import chunks_opening_in_code, get_sources
from knowledge.actions.ask import MODES
from knowledge.answering.readable import passage_blocks, readable
from knowledge.retrieval.limits import MAX_FILTER_ITEMS
from knowledge.retrieval.search import hybrid_search
from knowledge.retrieval.subjects import question_subjects
from knowledge.retrieval.types import ChunkHit
from knowledge.selectors.schema import list_entity_types
from system.llm.availability import llm_available
from workspaces.errors import InvalidInput
from workspaces.models import Workspace

MAX_QUESTION = 2000
PASSAGES = 8  # the ask API's default limit, so the page and the answer number alike
PANEL_PASSAGES = 5
MAX_SEEDS = 20
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


def _values(request: WorkspaceRequest, name: str) -> list[str]:
    """A filter's values: repeated (`sources=1&sources=2`, as a multi-select submits) or
    comma-separated (`sources=1,2`, as shared URLs have them), blanks dropped."""
    values = [v.strip() for raw in request.GET.getlist(name) for v in raw.split(",")]
    return [v for v in values if v][:MAX_FILTER_ITEMS]


@dataclass(frozen=True, slots=True)
class AskFilters:
    """The page's filters, each checked against the workspace: another workspace's
    source, an unknown type or a malformed date is ignored, never an error."""

    sources: list[int] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    start: date | None = None  # ingested from (`from`)
    end: date | None = None  # ingested until (`to`)
    published_start: date | None = None  # the document's own date from (`published_from`)
    published_end: date | None = None  # ... until (`published_to`)
    mode: str = "local"

    @property
    def narrowed(self) -> bool:
        """Whether any filter besides the mode is set (the page opens its filters)."""
        return bool(self.sources or self.types) or any(
            day is not None
            for day in (self.start, self.end, self.published_start, self.published_end)
        )


def _filters(request: WorkspaceRequest, workspace: Workspace, type_names: list[str]) -> AskFilters:
    wanted = [int(v) for v in _values(request, "sources") if v.isdigit() and len(v) < 12]
    known = set(get_sources(workspace).filter(pk__in=wanted).values_list("pk", flat=True))
    types = set(type_names)
    mode = request.GET.get("mode", "")
    return AskFilters(
        sources=[i for i in dict.fromkeys(wanted) if i in known],
        types=[t for t in dict.fromkeys(_values(request, "types")) if t in types],
        start=_day(request.GET.get("from", "")),
        end=_day(request.GET.get("to", "")),
        published_start=_day(request.GET.get("published_from", "")),
        published_end=_day(request.GET.get("published_to", "")),
        mode=mode if mode in MODES else "local",
    )


def _type_names(workspace: Workspace) -> list[str]:
    return sorted(t.name for t in list_entity_types(workspace))


def _day(raw: str) -> date | None:
    try:
        return date.fromisoformat(raw)
    except ValueError:
        return None


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


def _passage(
    workspace: Workspace, n: int, hit: ChunkHit, blocks: list[tuple[bool, str]], terms: set[str]
) -> dict[str, Any]:
    """A passage for the templates: its blocks (the Ask page sets code apart) and the same
    text flat (the explorer's panel), the question's words marked in both."""
    return {
        "n": n,
        "hit": hit,
        "pieces": _pieces(readable(blocks), terms),
        "blocks": [{"code": code, "pieces": _pieces(body, terms)} for code, body in blocks],
        "link": document_link(workspace, hit.document_id, hit.char_start, hit.char_end),
    }


def _results(
    workspace: Workspace, question: str, filters: AskFilters, *, limit: int = PASSAGES
) -> dict[str, Any]:
    result = hybrid_search(
        workspace=workspace,
        query=question,
        limit=limit,
        sources=filters.sources or None,
        entity_types=filters.types or None,
        record_access=False,
        ingested_from=filters.start,
        ingested_to=filters.end,
        published_from=filters.published_start,
        published_to=filters.published_end,
    )
    terms = {w.lower() for w in _WORD.findall(question)} - _COMMON
    in_code = chunks_opening_in_code(workspace, [hit.id for hit in result.chunks])
    entity_ids = [entity.id for entity in result.entities][:MAX_SEEDS]
    graph_query = {"ws": workspace.slug, "seeds": ",".join(map(str, entity_ids))}
    if entity_ids:
        graph_query["focus"] = str(entity_ids[0])
    return {
        "passages": [
            _passage(workspace, n, hit, passage_blocks(hit.text, in_code=hit.id in in_code), terms)
            for n, hit in enumerate(result.chunks, start=1)
        ],
        # Chips: what the question names or the first passages are about, not every
        # entity that helped rank (a loose match of one common word of the question).
        "entities": question_subjects(result),
        "relations": result.relations,
        "paths": [[node.name for node in p.nodes] for p in result.paths],
        "seed_ids": ",".join(map(str, entity_ids)),
        "graph_link": f"/explore/?{urlencode(graph_query)}" if entity_ids else "",
        "warnings": result.warnings,
        # The words a passage the answer adds is marked with (static/js/ask/passages.js).
        "terms": " ".join(sorted(terms)),
    }


def _question(request: WorkspaceRequest) -> str:
    return request.GET.get("q", "").strip()[:MAX_QUESTION]


def _ask_url(workspace: Workspace, question: str) -> str:
    return f"{reverse('explorer:ask')}?{urlencode({'ws': workspace.slug, 'q': question})}"


@require_GET
@workspace_page()
def ask(request: WorkspaceRequest) -> HttpResponse:
    """The question box with its filters, and for `?q=` the passages that answer it; with
    an LLM, static/js/ask/answer.js streams the answer above them from the ask API."""
    workspace = request.membership.workspace
    question = _question(request)
    type_names = _type_names(workspace)
    filters = _filters(request, workspace, type_names)
    context: dict[str, Any] = {
        "nav": "ask",
        "workspace": workspace,
        "q": question,
        "filters": filters,
        "source_choices": list(get_sources(workspace).only("id", "name")[:MAX_SOURCE_CHOICES]),
        "type_choices": type_names,
        "error": "",
        "llm_configured": llm_available(),
        "api_url": f"{reverse('api:api-root')}workspaces/{quote(workspace.slug, safe='')}/ask",
        "document_url": document_link(workspace, 0, None, None),
        "answer_sources": json.dumps(filters.sources),
        "answer_types": json.dumps(filters.types),
        "passage_limit": PASSAGES,
    }
    if question:
        try:
            context.update(_results(workspace, question, filters))
        except InvalidInput as error:
            context["error"] = str(error)
    return render(request, "explorer/ask/ask.html", context)


@require_GET
@workspace_page()
def ask_panel(request: WorkspaceRequest) -> HttpResponse:
    """The explorer's Ask box: the best passages as a fragment for its side panel, with
    the full Ask page a link away. Opened directly (no htmx), it is that page."""
    workspace = request.membership.workspace
    question = _question(request)
    if not getattr(request, "htmx", False):
        return redirect(_ask_url(workspace, question))
    context: dict[str, Any] = {"workspace": workspace, "q": question, "error": ""}
    context["full_url"] = _ask_url(workspace, question)
    if question:
        try:
            context.update(_results(workspace, question, AskFilters(), limit=PANEL_PASSAGES))
        except InvalidInput as error:
            context["error"] = str(error)
    return render(request, "explorer/ask/panel.html", context)


urlpatterns: list[URLPattern] = [
    path("ask/", ask, name="ask"),
    path("ask/panel/", ask_panel, name="ask_panel"),
]
