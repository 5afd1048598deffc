"""Which workspace a browser page is about, and who may see it.

Every page of the UI works in one workspace, the *current* one: `?ws=SLUG` on any URL picks
it (shared links carry it, so a colleague opening one lands in the same workspace), else
the one last chosen with the switcher (kept in the session), else the user's first. A
workspace the user is not a member of is answered like a missing page (404), as the API
does. Views decorated with `workspace_page` receive the membership as `request.membership`
and never look a workspace up themselves, so no page can forget the check; they declare
their request as `WorkspaceRequest`, which says so to the type checker.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any, Concatenate, cast
from urllib.parse import urlencode

from django.contrib.auth.views import redirect_to_login as auth_redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.http.response import HttpResponseBase
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.urls import reverse

from workspaces.models import Membership, Role
from workspaces.selectors import first_run_needed

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django_htmx.middleware import HtmxDetails

SESSION_KEY = "graphloom_workspace"


class WorkspaceRequest(HttpRequest):
    """The request a `workspace_page` view receives: what the type checker may assume on it.

    A type only: at run time the object is Django's own request with these attributes set
    on it, so it is never instantiated nor tested with isinstance, and holds no behaviour.
    """

    # workspace_page lets only signed-in users through.
    user: User
    # Set by workspace_page: the current workspace and the user's role in it.
    membership: Membership
    # Set on every request by django-htmx's middleware (config/settings/base.py).
    htmx: HtmxDetails
    # Set by the curation views when they answer with a panel of the graph screen, and read
    # by the panel's controls include (explorer/curation_views.py explains why).
    curation_panel: dict[str, Any]
    curation_relation: dict[str, Any]


def memberships_of(request: HttpRequest) -> list[Membership]:
    """The user's memberships, workspaces by name; read once per request."""
    # The memo lives in the request's own __dict__, as Django's cached_property keeps its
    # values: the layout's context processor asks again after the view did.
    cached: list[Membership] | None = request.__dict__.get("_graphloom_memberships")
    if cached is not None:
        return cached
    memberships = []
    if request.user.is_authenticated:
        memberships = list(
            Membership.objects.filter(user=request.user)
            .select_related("workspace")
            .order_by("workspace__name", "workspace__slug")
        )
    request.__dict__["_graphloom_memberships"] = memberships
    return memberships


def current_membership(request: HttpRequest) -> Membership | None:
    """The membership of the current workspace (see the module docstring), or None when the
    user belongs to none; Http404 when `?ws=` names one they do not belong to."""
    if "_graphloom_membership" in request.__dict__:
        cached: Membership | None = request.__dict__["_graphloom_membership"]
        return cached
    memberships = memberships_of(request)
    by_slug = {m.workspace.slug: m for m in memberships}
    asked = request.GET.get("ws")
    if asked:
        if asked not in by_slug:
            raise Http404("No such workspace.")
        chosen: Membership | None = by_slug[asked]
    else:
        chosen = by_slug.get(request.session.get(SESSION_KEY, "")) or (
            memberships[0] if memberships else None
        )
    request.__dict__["_graphloom_membership"] = chosen
    return chosen


def remember_workspace(request: HttpRequest, membership: Membership) -> None:
    request.session[SESSION_KEY] = membership.workspace.slug


def workspace_page[**P, R: HttpResponseBase](
    *, role: Role = Role.VIEWER
) -> Callable[
    [Callable[Concatenate[WorkspaceRequest, P], R]],
    Callable[Concatenate[HttpRequest, P], R | HttpResponse],
]:
    """Sign-in, a current workspace and at least `role` in it, or the page is refused:
    the first-run page before any account exists, the sign-in page for visitors, a page
    saying so to members without a workspace, 403 to members below `role` (the controls
    are hidden from them anyway; this is the server refusing). The view itself gets a
    `WorkspaceRequest`."""

    def decorate(
        view: Callable[Concatenate[WorkspaceRequest, P], R],
    ) -> Callable[Concatenate[HttpRequest, P], R | HttpResponse]:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: P.args, **kwargs: P.kwargs) -> R | HttpResponse:
            if first_run_needed():
                return redirect("explorer:setup")
            if not request.user.is_authenticated:
                return redirect_to_login(request)
            membership = current_membership(request)
            if membership is None:
                return HttpResponse(
                    render_to_string("explorer/no_workspace.html", request=request), status=403
                )
            if not membership.allows(role):
                return HttpResponseForbidden(
                    f"This needs the {role.label.lower()} role in this workspace; "
                    f"you are {membership.role}."
                )
            # A page opened with ?ws= becomes the current workspace; an htmx request (a
            # panel, a polling list in another tab) does not change it.
            if request.GET.get("ws") and not getattr(request, "htmx", False):
                remember_workspace(request, membership)
            # The one place a request becomes a WorkspaceRequest: its membership is now set,
            # and its user signed in.
            workspace_request = cast(WorkspaceRequest, request)
            workspace_request.membership = membership
            return view(workspace_request, *args, **kwargs)

        return wrapper

    return decorate


def workspace_query(request: WorkspaceRequest, **params: object) -> str:
    """The query string of a URL for this workspace: `ws` plus the non-empty `params`.
    A page polled or a form posted from one tab must stay in the workspace that tab shows,
    whatever another tab switched the session to."""
    ws = str(request.membership.workspace.slug)
    return urlencode({"ws": ws, **{k: v for k, v in params.items() if v}})


def workspace_url(request: WorkspaceRequest, name: str, *args: object, **params: object) -> str:
    """The URL named `name` (with `args`) for this workspace (see `workspace_query`)."""
    return f"{reverse(name, args=args)}?{workspace_query(request, **params)}"


def redirect_to_login(request: HttpRequest) -> HttpResponse:
    return auth_redirect_to_login(request.get_full_path(), "explorer:login")


def ui_context(request: HttpRequest) -> dict[str, Any]:
    """Template context for the layout: the workspace switcher and what the user may do."""
    if not request.user.is_authenticated:
        return {}
    try:
        membership = current_membership(request)
    except Http404:
        membership = None
    return {
        "memberships": memberships_of(request),
        "current_membership": membership,
        "can_edit": bool(membership and membership.allows(Role.EDITOR)),
        "is_workspace_admin": bool(membership and membership.allows(Role.ADMIN)),
    }
