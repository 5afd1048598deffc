"""Account screens: the workspace switcher and API token management.

Tokens follow the API's rules exactly (workspaces/api.py), so the browser cannot do what a
program could not: every member may create tokens for themselves in the current workspace,
members see and revoke their own, admins see and revoke everyone's, and a token of another
workspace is answered like a missing one (404).

A new token's secret exists in clear only in the response to the POST that created it:
the page is rendered from that POST (never a redirect carrying the secret in a URL or the
session) and marked `no-store`, so a reload, the back button or a shared cache cannot
bring it back. Only its hash is stored.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.contrib import messages
from django.db.models import F
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from explorer.forms import ApiTokenForm
from explorer.workspace_pages import (
    WorkspaceRequest,
    memberships_of,
    redirect_to_login,
    remember_workspace,
    workspace_page,
)
from workspaces.actions.tokens import IssuedToken, do_create_api_token, do_revoke_api_token
from workspaces.errors import DomainError, NotFound, PermissionDenied
from workspaces.models import ApiToken, Membership, Role
from workspaces.selectors import get_api_token_for_workspace, get_api_tokens, require_role


def _tokens_url(membership: Membership) -> str:
    """The token page pinned to `membership`'s workspace, so a form posted from it acts
    there even if another tab switched the session's workspace meanwhile."""
    return f"{reverse('explorer:tokens')}?{urlencode({'ws': membership.workspace.slug})}"


@never_cache
@require_http_methods(["GET", "POST"])
@workspace_page()
def tokens(request: WorkspaceRequest) -> HttpResponse:
    """List the tokens the member may see; on POST create one and show its secret once."""
    membership, user = request.membership, request.user
    form = ApiTokenForm(request.POST if request.method == "POST" else None)
    issued: IssuedToken | None = None
    if request.method == "POST" and form.is_valid():
        try:
            issued = do_create_api_token(
                workspace=membership.workspace, user=user, name=form.cleaned_data["name"]
            )
        except DomainError as exc:
            form.add_error("name", exc.message)
        else:
            form = ApiTokenForm()  # ready for the next one; the secret takes the focus
    sees_everyones = membership.allows(Role.ADMIN)
    # Active tokens first (they are the ones to act on), then the revoked ones, newest first.
    listed = get_api_tokens(membership.workspace, user=None if sees_everyones else user).order_by(
        F("revoked_at").desc(nulls_first=True), "-created_at"
    )
    return render(
        request,
        "explorer/account/tokens.html",
        {
            "nav": "tokens",
            "form": form,
            "issued": issued,
            "tokens": listed,
            "sees_everyones": sees_everyones,
            "tokens_url": _tokens_url(membership),
            "me_url": request.build_absolute_uri("/api/v1/me"),
        },
    )


def _revocable_token(request: WorkspaceRequest, token_id: int) -> ApiToken:
    """The token if this member may revoke it: their own, or any as admin (as the API)."""
    membership = request.membership
    token = get_api_token_for_workspace(membership.workspace, token_id)
    if token.user_id != request.user.pk:
        require_role(membership, Role.ADMIN)
    return token


@never_cache
@require_http_methods(["GET", "POST"])
@workspace_page()
def token_revoke(request: WorkspaceRequest, token_id: int) -> HttpResponse:
    """Ask for confirmation (GET), then revoke (POST) and go back to the list."""
    membership = request.membership
    context: dict[str, Any] = {"nav": "tokens", "tokens_url": _tokens_url(membership)}
    try:
        token = _revocable_token(request, token_id)
    except NotFound as exc:
        raise Http404(exc.message) from None
    except PermissionDenied as exc:
        context["problem"] = exc.message
        return render(request, "explorer/account/refused.html", context, status=403)
    if request.method == "POST":
        already = token.revoked_at is not None
        do_revoke_api_token(token=token)
        if already:
            messages.info(request, f"Token “{token.name}” was already revoked.")
        else:
            messages.success(request, f"Token “{token.name}” is revoked; it no longer works.")
        return redirect(context["tokens_url"])
    context["token"] = token
    return render(request, "explorer/account/token_revoke.html", context)


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
    path("account/tokens/<int:token_id>/revoke/", token_revoke, name="token_revoke"),
    path("workspace/switch/", switch_workspace, name="switch_workspace"),
]
