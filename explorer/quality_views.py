"""The quality page: the quality report of the current workspace, or of one source
(`?source=ID`), with one-click Delete and Block on each suspicious name.

Members read it (viewers too); the buttons are for editors, and the server refuses anyone
else (403). Each button posts (htmx, CSRF header; a plain form post without JavaScript) to
its own endpoint, which calls one action — `do_delete_entity`, or `do_block_entity_name`
(delete, and block the name in every type) — and answers with the name's row saying what
happened, with an Undo button (`do_restore_entity`, `do_undo_block`). A plain form post is
redirected back to the page with the message. As on the curation controls, an htmx request
gets 200 with the error in the row (htmx swaps no 4xx answer), any other client the error's
status. Every URL carries `?ws=`, so a page left open in a tab keeps acting on the
workspace it shows.

A source's page also shows what was learnt from the source's own structure: the section
labels its documents repeat (knowledge/selectors/section_labels.py), with how many
documents carry each, and the text it repeats as boilerplate (never extracted nor
searched). An editor can mark a learnt label "not structure" (extraction may
then make an entity of it), add a label as structure, or give a label back to the counts
(`do_set_section_label`); a change takes effect when the source is extracted again, which
the same section offers (`do_request_extraction`, forced).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path, reverse
from django.views.decorators.http import require_GET, require_POST

from explorer.workspace_pages import WorkspaceRequest, workspace_page
from ingest.models import Source
from ingest.selectors import get_source_for_workspace, get_sources
from knowledge.actions.curation.block import do_undo_block
from knowledge.actions.curation.entities import do_delete_entity, do_restore_entity
from knowledge.actions.extraction.documents import do_request_extraction
from knowledge.actions.extraction.section_labels import do_set_section_label
from knowledge.actions.quality import do_block_entity_name
from knowledge.models import CurationEvent
from knowledge.selectors.quality import (
    get_boilerplate_samples,
    get_quality_report,
    get_suspicious_name,
)
from knowledge.selectors.section_labels import (
    MIN_DOCUMENTS,
    MIN_SHARE,
    SectionLabel,
    section_labels,
)
from workspaces.errors import DomainError, InvalidInput, NotFound
from workspaces.models import Role, Workspace


@dataclass
class Outcome:
    """What a button did, shown in the name's row: the message, and what Undo calls."""

    message: str
    error: bool = False
    status: int = 200
    undo: str | None = None  # "restore" | "unblock"
    event: int | None = None


def _workspace(request: WorkspaceRequest) -> Workspace:
    return request.membership.workspace


def _source(request: WorkspaceRequest) -> Source | None:
    """The source the page reports on (`source` in the query or the form), or None."""
    raw = request.POST.get("source") or request.GET.get("source")
    if not raw:
        return None
    try:
        return get_source_for_workspace(_workspace(request), int(raw))
    except (ValueError, NotFound):
        raise Http404("No such source in this workspace.") from None


def _page_url(request: WorkspaceRequest, source: Source | None) -> str:
    params = {"ws": _workspace(request).slug}
    if source is not None:
        params["source"] = str(source.pk)
    return f"{reverse('explorer:quality')}?{urlencode(params)}"


@workspace_page()
@require_GET
def quality(request: WorkspaceRequest) -> HttpResponse:
    workspace = _workspace(request)
    source = _source(request)
    report = get_quality_report(workspace, source=source)
    return render(
        request,
        "explorer/quality/report.html",
        {
            "nav": "quality",
            "report": report,
            "source": source,
            "ws": workspace.slug,
            "page_url": _page_url(request, source),
            "labels": _labels(workspace, source) if source is not None else None,
            "boilerplate": (
                get_boilerplate_samples(workspace, source) if source is not None else None
            ),
            "sources": _sources(workspace) if source is None else None,
            "label_rule": {"documents": MIN_DOCUMENTS, "percent": f"{MIN_SHARE * 100:g}"},
        },
    )


def _labels(workspace: Workspace, source: Source) -> list[SectionLabel]:
    return section_labels(workspace, source)


def _sources(workspace: Workspace) -> list[Source]:
    """The workspace's sources, each linking to its own report and what it learnt."""
    return list(get_sources(workspace).order_by("name", "pk").only("pk", "name")[:200])


# What the label form's `structure` field asks for (anything else is refused).
_DECISIONS: dict[str, bool | None] = {"structure": True, "not_structure": False, "learnt": None}


@workspace_page(role=Role.EDITOR)
@require_POST
def section_label(request: WorkspaceRequest) -> HttpResponse:
    """Mark a label of the source structure, not structure, or back to what its counts say,
    and answer with the labels section (htmx) or back to the page with a message."""
    workspace, source = _workspace(request), _source(request)
    if source is None:
        raise Http404("Say which source.")
    decision = request.POST.get("structure", "")
    label = request.POST.get("label", "")
    try:
        if decision not in _DECISIONS:
            raise InvalidInput("Say whether the label is structure.")
        do_set_section_label(
            workspace=workspace, source=source, label=label, structure=_DECISIONS[decision],
            actor=request.user,
        )  # fmt: skip
    except DomainError as exc:
        outcome = Outcome(exc.message, error=True, status=exc.status)
    else:
        outcome = Outcome(_said(label, decision))
    return _labels_answer(request, workspace, source, outcome)


@workspace_page(role=Role.EDITOR)
@require_POST
def reextract(request: WorkspaceRequest) -> HttpResponse:
    """Queue the source's extraction again, forced, so the labels as they stand now apply."""
    workspace, source = _workspace(request), _source(request)
    if source is None:
        raise Http404("Say which source.")
    do_request_extraction(source=source, force=True)
    return _labels_answer(
        request, workspace, source, Outcome("Extraction of this source queued again.")
    )


def _said(label: str, decision: str) -> str:
    text = " ".join(label.split())[:80]
    if decision == "structure":
        return f"“{text}” is structure in this source from its next extraction."
    if decision == "not_structure":
        return f"“{text}” is not structure: its next extraction may make an entity of it."
    return f"“{text}” is left to what the source's pages say, from its next extraction."


def _labels_answer(
    request: WorkspaceRequest, workspace: Workspace, source: Source, outcome: Outcome
) -> HttpResponse:
    if not request.htmx:
        (messages.error if outcome.error else messages.success)(request, outcome.message)
        return redirect(_page_url(request, source) + "#labels-heading")
    return render(
        request,
        "explorer/quality/report.html#section-labels",
        {
            "labels": _labels(workspace, source),
            "outcome": outcome,
            "source": source,
            "ws": workspace.slug,
            "can_edit": True,
        },
    )


def _decide(
    request: WorkspaceRequest,
    entity_id: int,
    act: Callable[[Workspace, Any], CurationEvent],
    undo: Callable[[CurationEvent], tuple[str | None, int | None]],
) -> HttpResponse:
    """Run one action on the name's entity and answer with its row (htmx), or back to the
    page with a message."""
    workspace = _workspace(request)
    source = _source(request)
    if get_suspicious_name(workspace, entity_id, source=source) is None:
        raise Http404("No such entity in this workspace.")
    try:
        event = act(workspace, request.user)
    except DomainError as exc:
        outcome = Outcome(exc.message, error=True, status=exc.status)
    else:
        kind, event_id = undo(event)
        outcome = Outcome(event.summary, undo=kind, event=event_id)
    if not request.htmx:
        (messages.error if outcome.error else messages.success)(request, outcome.message)
        return redirect(_page_url(request, source))
    row = get_suspicious_name(workspace, entity_id, source=source)
    return render(
        request,
        "explorer/quality/report.html#suspicious-row",
        {"row": row, "outcome": outcome, "source": source, "ws": workspace.slug},
    )


@workspace_page(role=Role.EDITOR)
@require_POST
def delete_name(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    """Delete the entity (its names blocked in its type); Undo restores it."""

    def act(workspace: Workspace, actor: Any) -> CurationEvent:
        return do_delete_entity(workspace=workspace, entity_id=entity_id, actor=actor)

    return _decide(request, entity_id, act, lambda event: ("restore", event.pk))


@workspace_page(role=Role.EDITOR)
@require_POST
def block_name(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    """Delete the entity and block its name in every type; Undo lifts both."""

    def act(workspace: Workspace, actor: Any) -> CurationEvent:
        return do_block_entity_name(workspace=workspace, entity_id=entity_id, actor=actor)

    return _decide(request, entity_id, act, lambda event: ("unblock", event.pk))


@workspace_page(role=Role.EDITOR)
@require_POST
def undo_name(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    """Undo a Delete (`undo=restore`) or a Block (`undo=unblock`, `event` the block's)."""
    kind = request.POST.get("undo", "")

    def act(workspace: Workspace, actor: Any) -> CurationEvent:
        if kind == "restore":
            return do_restore_entity(workspace=workspace, entity_id=entity_id, actor=actor)
        if kind == "unblock":
            try:
                event_id = int(request.POST.get("event", ""))
            except ValueError:
                raise InvalidInput("Say which block to undo.") from None
            return do_undo_block(workspace=workspace, event_id=event_id, actor=actor)
        raise InvalidInput("Say what to undo.")

    return _decide(request, entity_id, act, lambda event: (None, None))


urlpatterns: list[URLPattern] = [
    path("quality/", quality, name="quality"),
    path("quality/entities/<int:entity_id>/delete/", delete_name, name="quality_delete"),
    path("quality/entities/<int:entity_id>/block/", block_name, name="quality_block"),
    path("quality/entities/<int:entity_id>/undo/", undo_name, name="quality_undo"),
    path("quality/labels/", section_label, name="quality_label"),
    path("quality/labels/reextract/", reextract, name="quality_reextract"),
]
