"""Root URLs: the browser UI, the admin, the JSON API under /api/v1/ and the MCP server
for agents at /mcp/, and /metrics for Prometheus."""

from django.contrib import admin
from django.urls import include, path, re_path

from agents.views import mcp_endpoint
from config.api import api
from system.status_views import status
from system.views import metrics

urlpatterns = [
    # Staff only: the scheduled upkeep jobs and the workers (system/status_views.py).
    path("admin/status/", status, name="system-status"),
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
    # Prometheus scrapes, off unless METRICS_TOKEN or METRICS_ALLOWED_NETWORKS is set.
    path("metrics", metrics, name="metrics"),
    # With or without the slash: hosts are configured with either, and a POST cannot be
    # redirected to the other.
    re_path(r"^mcp/?$", mcp_endpoint, name="mcp"),
    path("", include("explorer.urls")),
]
