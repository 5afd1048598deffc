"""The call log in the admin: read-only, since it is a record of what happened."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from agents.models import AgentCall


@admin.register(AgentCall)
class AgentCallAdmin(admin.ModelAdmin):
    list_display = ("created_at", "workspace", "token", "tool", "transport", "ok", "duration_ms")
    list_filter = ("ok", "transport", "tool")
    search_fields = ("tool", "error", "token__name", "token__prefix")
    readonly_fields = (
        "workspace", "token", "tool", "transport", "duration_ms", "ok", "error", "created_at",
    )  # fmt: skip
    list_select_related = ("workspace", "token")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
