"""Curation in the browser: entity edits from the entity panel, and the review page for
merge suggestions. Editors only; the server refuses viewers. (Being built: issue 8.)"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import URLPattern, path

from explorer.workspace_pages import workspace_page
from workspaces.models import Role


@workspace_page(role=Role.EDITOR)
def review(request: HttpRequest) -> HttpResponse:
    return render(request, "explorer/placeholder.html", {"nav": "review", "what": "Review"})


urlpatterns: list[URLPattern] = [
    path("review/", review, name="review"),
]
