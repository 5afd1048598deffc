"""Workspace screens: deleting a workspace, after typing its slug to confirm.

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

from explorer.workspace_pages import SESSION_KEY, memberships_of, redirect_to_login
from workspaces.actions.workspaces import do_request_workspace_deletion
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


urlpatterns: list[URLPattern] = [
    path("workspaces/<slug:slug>/delete/", delete_workspace, name="workspace_delete"),
]
