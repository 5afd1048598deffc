"""The graph explorer page and its htmx panels. (Being built: issue 8.)"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import URLPattern, path

from explorer.workspace_pages import workspace_page


@workspace_page()
def explore(request: HttpRequest) -> HttpResponse:
    return render(request, "explorer/placeholder.html", {"nav": "explore", "what": "Explore"})


urlpatterns: list[URLPattern] = [
    path("explore/", explore, name="explore"),
]
