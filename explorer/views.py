"""First run and sign-in. The screens themselves live in sources_views, graph_views,
curation_views and account_views; every view is thin: parse, authorize, call one action or
selector, render."""

from __future__ import annotations

from django.contrib.auth import login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods

from explorer.forms import FirstRunForm
from workspaces.actions.first_run import do_first_run_setup
from workspaces.errors import DomainError
from workspaces.selectors import first_run_needed


@sensitive_post_parameters("password", "password_again")
@require_http_methods(["GET", "POST"])
def setup(request: HttpRequest) -> HttpResponse:
    """First run: create the admin account and the first workspace. Gone once done."""
    if not first_run_needed():
        raise Http404("Graphloom is already set up.")
    form = FirstRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            result = do_first_run_setup(
                username=data["username"],
                email=data["email"],
                password=data["password"],
                workspace_name=data["workspace_name"],
                workspace_slug=data["workspace_slug"],
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            login(request, result.user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect("explorer:home")
    return render(request, "explorer/setup.html", {"form": form})
