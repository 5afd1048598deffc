"""Account screens: the workspace switcher and API token management. (Being built: issue 8.)"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from explorer.workspace_pages import (
    memberships_of,
    redirect_to_login,
    remember_workspace,
    workspace_page,
)


@workspace_page()
def tokens(request: HttpRequest) -> HttpResponse:
    return render(request, "explorer/placeholder.html", {"nav": "tokens", "what": "API tokens"})


@require_POST
def switch_workspace(request: HttpRequest) -> HttpResponse:
    """Make `ws` the current workspace and go back where the person was (same site only)."""
    if not request.user.is_authenticated:
        return redirect_to_login(request)
    chosen = {m.workspace.slug: m for m in memberships_of(request)}.get(request.POST.get("ws", ""))
    if chosen is None:
        raise Http404("No such workspace.")
    remember_workspace(request, chosen)
    back = request.META.get("HTTP_REFERER", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = reverse("explorer:home")
    # A ?ws= in the page's address would win over the switch: drop it.
    parts = urlsplit(back)
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k != "ws"])
    return redirect(urlunsplit(parts._replace(query=query)) or reverse("explorer:home"))


urlpatterns: list[URLPattern] = [
    path("account/tokens/", tokens, name="tokens"),
    path("workspace/switch/", switch_workspace, name="switch_workspace"),
]
