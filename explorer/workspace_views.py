"""Workspace screens: the workspace's page (who you are in it, its monthly LLM budget and what
this month spent, which its admins may change), and deleting a workspace, after typing its
slug to confirm.

Deletion follows the API's rule (workspaces/api.py, DELETE /workspaces/{slug}): the
workspace's admins may ask; a workspace the user does not belong to is answered like a
missing page (404). The deletion itself runs in the background; from the moment it is
asked for, the workspace is gone from every list and every page.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.urls import URLPattern, path
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from explorer.workspace_pages import (
    SESSION_KEY,
    WorkspaceRequest,
    memberships_of,
    redirect_to_login,
    workspace_page,
    workspace_query,
    workspace_url,
)
from knowledge.actions.extraction.monthly_budget import do_set_workspace_llm_budget
from knowledge.selectors.llm_usage import get_llm_budget
from workspaces.actions.workspaces import do_request_workspace_deletion
from workspaces.errors import DomainError
from workspaces.models import Membership, Role


def _membership_or_404(request: HttpRequest, slug: str) -> Membership:
    for membership in memberships_of(request):
        if membership.workspace.slug == slug:
            return membership
    raise Http404("No such workspace.")


@never_cache
@require_http_methods(["GET", "POST"])
def delete_workspace(request: HttpRequest, slug: str) -> HttpResponse:
    """GET asks for the slug to be typed; a POST carrying it asks for the deletion."""
    if not request.user.is_authenticated:
        return redirect_to_login(request)
    membership = _membership_or_404(request, slug)
    if not membership.allows(Role.ADMIN):
        return HttpResponseForbidden(
            f"Deleting a workspace needs the admin role; you are {membership.role}."
        )
    workspace = membership.workspace
    error = ""
    if request.method == "POST":
        if request.POST.get("confirm", "").strip() == workspace.slug:
            do_request_workspace_deletion(workspace=workspace, actor=request.user)
            if request.session.get(SESSION_KEY) == workspace.slug:
                del request.session[SESSION_KEY]
            messages.success(
                request, f"Deleting workspace “{workspace.name}” and everything in it."
            )
            return redirect("explorer:home")
        error = "Type the workspace's slug exactly to confirm."
    return render(
        request,
        "explorer/workspaces/confirm_delete.html",
        {"workspace": workspace, "error": error},
        status=422 if error else 200,
    )


def _page(request: WorkspaceRequest, *, amount: str | None = None, error: str = "") -> HttpResponse:
    workspace = request.membership.workspace
    budget = get_llm_budget(workspace)
    if amount is None:
        override = budget["override_usd"]
        amount = "" if override is None else f"{override:.2f}"
    context = {
        "nav": "workspace",
        "workspace": workspace,
        "budget": budget,
        "amount": amount,
        "error": error,
        "ws_query": workspace_query(request),
    }
    return render(request, "explorer/workspaces/page.html", context, status=422 if error else 200)


@never_cache
@require_http_methods(["GET"])
@workspace_page()
def workspace_detail(request: WorkspaceRequest) -> HttpResponse:
    """The current workspace: your role, its monthly LLM budget and this month's use."""
    return _page(request)


@never_cache
@require_http_methods(["POST"])
@workspace_page(role=Role.ADMIN)
def set_llm_budget(request: WorkspaceRequest) -> HttpResponse:
    """An admin sets the workspace's monthly LLM budget (empty: the server's default);
    extraction paused at the old one resumes when the new one is not spent."""
    amount = request.POST.get("monthly_budget_usd", "").strip()
    try:
        workspace = do_set_workspace_llm_budget(
            workspace=request.membership.workspace, amount=amount or None
        )
    except DomainError as exc:
        return _page(request, amount=amount, error=exc.message.partition(": ")[2] or exc.message)
    budget = get_llm_budget(workspace)
    limit = budget["monthly_budget_usd"]
    said = "no limit" if limit is None else f"{limit:,.2f} USD a month"
    messages.success(request, f"Monthly LLM budget saved: {said}.")
    return redirect(workspace_url(request, "explorer:workspace"))


urlpatterns: list[URLPattern] = [
    path("workspace/", workspace_detail, name="workspace"),
    path("workspace/llm-budget/", set_llm_budget, name="workspace_llm_budget"),
    path("workspaces/<slug:slug>/delete/", delete_workspace, name="workspace_delete"),
]
