"""Sources screens: the list with live progress (the home page), uploads, crawls, a
source's detail page and its actions. (Being built: issue 8.)"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import URLPattern, path

from explorer.workspace_pages import workspace_page


@workspace_page()
def source_list(request: HttpRequest) -> HttpResponse:
    return render(request, "explorer/placeholder.html", {"nav": "sources", "what": "Sources"})


urlpatterns: list[URLPattern] = [
    path("", source_list, name="home"),
]
