"""Root URLs: the browser UI, the admin and the JSON API under /api/v1/."""

from django.contrib import admin
from django.urls import include, path

from config.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
    path("", include("explorer.urls")),
]
