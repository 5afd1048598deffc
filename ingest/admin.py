"""Django admin for sources and documents: read-mostly views with a workspace filter, for
operators looking into what was ingested. Nothing here edits a row directly; the few
actions (cancel, retry, re-ingest, delete) call the same ingest actions the UI and the API
call, so the worker, the graph and the blobs follow as they would from there."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from ingest.actions.sources import (
    do_cancel_source,
    do_reingest_source,
    do_request_source_deletion,
    do_retry_source,
)
from ingest.models import Document, Source, SourceStatus
from workspaces.errors import DomainError


class ReadMostlyAdmin(admin.ModelAdmin):
    """Shows everything, changes nothing by form: rows are written by the ingest actions."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class DocumentInline(admin.TabularInline):
    model = Document
    fields = ("path", "title", "status", "error", "created_at")
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = True


@admin.register(Source)
class SourceAdmin(ReadMostlyAdmin):
    list_display = ("name", "kind", "workspace", "status", "stage", "created_at", "finished_at")
    list_filter = ("workspace", "kind", "status")
    search_fields = ("name", "origin")
    readonly_fields = (
        "workspace", "kind", "name", "origin", "tags", "settings", "status", "stage",
        "counters", "error", "warning", "created_by", "created_at", "started_at", "finished_at",
        "refresh_every", "next_run_at", "last_run",
    )  # fmt: skip
    inlines = [DocumentInline]
    actions = ["cancel", "retry", "reingest", "delete_sources"]

    def _each(self, request: HttpRequest, queryset: QuerySet[Source], act: Any, verb: str) -> None:
        done = 0
        for source in queryset:
            try:
                act(source)
            except DomainError as exc:  # one refused row must not stop the others
                self.message_user(request, f"{source.name}: {exc}", messages.ERROR)
            else:
                done += 1
        self.message_user(request, f"{done} source(s) {verb}.")

    @admin.action(description="Cancel the selected sources' work")
    def cancel(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        self._each(request, queryset, lambda s: do_cancel_source(source=s), "cancelled")

    @admin.action(description="Retry the selected sources' failed documents")
    def retry(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        self._each(request, queryset, lambda s: do_retry_source(source=s), "retried")

    @admin.action(description="Re-ingest the selected sources")
    def reingest(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        self._each(request, queryset, lambda s: do_reingest_source(source=s), "re-ingested")

    @admin.action(description="Delete the selected sources (in the background, with their graph)")
    def delete_sources(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        live = queryset.exclude(status=SourceStatus.DELETING)
        self._each(
            request, live, lambda s: do_request_source_deletion(source=s), "marked for deletion"
        )


@admin.register(Document)
class DocumentAdmin(ReadMostlyAdmin):
    list_display = ("path", "title", "source", "workspace", "status", "created_at")
    list_filter = ("workspace", "status", "format")
    search_fields = ("path", "title")
    list_select_related = ("source", "workspace")
    readonly_fields = (
        "workspace", "source", "path", "title", "mime", "format", "content_hash", "status",
        "error", "warnings", "duplicate_of", "metadata", "created_at", "updated_at",
    )  # fmt: skip
    exclude = ("text",)
