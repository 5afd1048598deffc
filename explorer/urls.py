"""The browser UI's URLs: each screen's module lists its own (sources_views,
source_detail_views, document_views, graph_views, curation_views, review_views,
history_views, quality_views, schema_views, entities_views, account_views, ask_views,
workspace_views); sign-in and first run are here."""

from django.contrib.auth import views as auth_views
from django.urls import path

from explorer import (
    account_views,
    ask_views,
    curation_views,
    document_views,
    entities_views,
    graph_views,
    history_views,
    quality_views,
    review_views,
    schema_views,
    source_detail_views,
    sources_views,
    views,
    workspace_views,
)

app_name = "explorer"

urlpatterns = [
    path("setup/", views.setup, name="setup"),
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="explorer/login.html", redirect_authenticated_user=True
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    *sources_views.urlpatterns,
    *source_detail_views.urlpatterns,
    *document_views.urlpatterns,
    *graph_views.urlpatterns,
    *review_views.urlpatterns,
    *curation_views.urlpatterns,
    *history_views.urlpatterns,
    *quality_views.urlpatterns,
    *schema_views.urlpatterns,
    *entities_views.urlpatterns,
    *account_views.urlpatterns,
    *workspace_views.urlpatterns,
    *ask_views.urlpatterns,
]
