"""Admin for tenancy: workspaces with their members inline, tokens (revoke only)."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from workspaces.actions.tokens import do_revoke_api_token
from workspaces.models import ApiToken, Membership, Workspace


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["workspace", "user", "role", "created_at"]
    list_filter = ["role", "workspace"]
    search_fields = ["user__username", "workspace__slug"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are created where their secret can be shown once (UI, API, command), not here."""

    list_display = [
        "name",
        "prefix",
        "user",
        "workspace",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["workspace"]
    search_fields = ["name", "prefix", "user__username"]
    readonly_fields = ["prefix", "secret_hash", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        for token in queryset:
            do_revoke_api_token(token=token)
