"""The document page: a document's text, the page every evidence link points at
(`/documents/<id>/?start=&end=` from the graph panels, Ask and the source pages), with
that span marked and scrolled into view.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import URLPattern, path
from django.views.decorators.http import require_safe

from explorer.workspace_pages import WorkspaceRequest, workspace_page, workspace_query
from ingest.selectors import get_document_for_workspace
from workspaces.errors import NotFound


def _span(request: WorkspaceRequest, length: int) -> tuple[int, int] | None:
    """`?start=N&end=M` as character offsets into the text, clamped to it; None when absent
    or empty (the text may have changed since the evidence was recorded)."""
    start, end = request.GET.get("start", ""), request.GET.get("end", "")
    if not (start.isdigit() and end.isdigit()):
        return None
    first, last = min(int(start), length), min(int(end), length)
    return (first, last) if first < last else None


@require_safe
@workspace_page()
def document(request: WorkspaceRequest, document_id: int) -> HttpResponse:
    """A document's text; with `?start=&end=` the span is marked and scrolled into view.
    The three parts are plain strings: the template escapes each, so no document text is
    ever trusted as markup."""
    try:
        doc = get_document_for_workspace(request.membership.workspace, document_id)
    except NotFound as exc:
        raise Http404(exc.message) from None
    text = doc.text
    span = _span(request, len(text))
    asked = "start" in request.GET or "end" in request.GET
    context: dict[str, Any] = {
        "document": doc,
        "source": doc.source,
        "nav": "sources",
        "ws_query": workspace_query(request),
        "span": span,
        "span_missing": asked and span is None,
    }
    if span is None:
        context["before"], context["marked"], context["after"] = text, "", ""
    else:
        first, last = span
        context["before"], context["marked"], context["after"] = (
            text[:first],
            text[first:last],
            text[last:],
        )
    return render(request, "explorer/sources/document.html", context)


urlpatterns: list[URLPattern] = [
    path("documents/<int:document_id>/", document, name="document"),
]
