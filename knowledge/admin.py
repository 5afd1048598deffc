"""Django admin for curation: entities (with their evidence and history), relations (with
their history and hand-made notes), the merge-suggestion queue, the curation log, and the
schema registry's entity and relation types, and the overrides of sources' learnt section
labels. Every change goes through the curation actions, so the admin leaves the same events and
rules as the API."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse

from knowledge.actions.curation.entities import (
    do_delete_entity,
    do_restore_entity,
    do_update_entity,
)
from knowledge.actions.curation.merge import do_merge_entities
from knowledge.actions.curation.relations import (
    do_delete_relation,
    do_reverse_relation,
    do_update_relation,
)
from knowledge.actions.curation.suggestions import do_accept_suggestion, do_reject_suggestion
from knowledge.actions.extraction.section_labels import do_set_section_label
from knowledge.actions.schema import (
    TypeKind,
    do_accept_type,
    do_rename_type,
    do_retire_type,
    do_set_relation_domain,
)
from knowledge.models import (
    CurationEvent,
    Entity,
    EntityState,
    EntityType,
    Mention,
    MergeSuggestion,
    Relation,
    RelationType,
    SectionLabelOverride,
    SuggestionStatus,
)
from knowledge.models.curation import RelationNote
from workspaces.errors import DomainError


class MentionInline(admin.TabularInline):
    model = Mention
    fields = ("surface_form", "chunk", "char_start", "char_end", "description", "run")
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = False
    verbose_name_plural = "evidence (mentions)"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Mention]:
        return super().get_queryset(request).select_related("chunk", "run")


class HistoryInline(admin.TabularInline):
    model = CurationEvent
    fk_name = "entity"
    fields = ("created_at", "action", "actor", "summary", "undone_by")
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    verbose_name_plural = "history"


@admin.register(Entity)
class EntityAdmin(admin.ModelAdmin):
    list_display = ("name", "type", "state", "mention_count", "last_seen_at", "workspace")
    list_filter = ("state", ("type", admin.RelatedOnlyFieldListFilter), "workspace", "curated")
    search_fields = ("name", "canonical_name", "alias_rows__canonical")
    readonly_fields = (
        # The description is derived from evidence (see do_refresh_derived): an edit would
        # be overwritten by the next extraction, so it is not offered.
        "workspace", "canonical_name", "description", "summary", "summary_hash",
        "mention_count", "first_seen_at", "last_seen_at",
        "state", "merged_into", "aliases", "curated", "type_votes", "type_curated",
        "blocking_keys", "community", "retrieved_count", "last_retrieved_at",
        "embedding_model", "embedding_dim", "source_ids", "properties",
    )  # fmt: skip
    exclude = ("embedding",)
    inlines = (MentionInline, HistoryInline)
    actions = ("merge_selected", "delete_selected_entities", "restore_selected_entities")

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Deleting is a curation action (reversible, names blocked), not a row deletion.
        return False

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Entities come from evidence (or a split); a bare row would have no canonical key.
        return False

    def save_model(self, request: HttpRequest, obj: Entity, form: Any, change: bool) -> None:
        """Name and type are the only fields the admin edits (the rest are derived from
        evidence, read-only here); they go through `do_update_entity`, so each change
        leaves an event, the rules that make it hold after re-extraction, and the graph
        projection in step."""
        before = Entity.objects.select_related("type", "workspace").get(pk=obj.pk)
        changed = set(form.changed_data)
        try:
            do_update_entity(
                workspace=before.workspace,
                entity_id=obj.pk,
                name=obj.name if "name" in changed else None,
                type_name=obj.type.name if "type" in changed else None,
                actor=request.user,  # type: ignore[arg-type]
            )
        except DomainError as exc:
            self.message_user(request, exc.message, messages.ERROR)

    @admin.action(description="Merge selected entities (choose the survivor)")
    def merge_selected(self, request: HttpRequest, queryset: QuerySet[Entity]) -> Any:
        entities = list(queryset.select_related("type", "workspace").order_by("-mention_count"))
        if len({e.workspace_id for e in entities}) != 1 or len(entities) < 2:
            self.message_user(
                request, "Select two or more entities of one workspace.", messages.ERROR
            )
            return None
        if request.POST.get("apply"):
            survivor = next(
                (e for e in entities if str(e.pk) == request.POST.get("survivor")), None
            )
            if survivor is None:
                self.message_user(request, "Choose the entity to keep.", messages.ERROR)
                return None
            try:
                event = do_merge_entities(
                    workspace=entities[0].workspace,
                    survivor_id=survivor.pk,
                    merged_ids=[e.pk for e in entities],
                    actor=request.user,  # type: ignore[arg-type]
                )
            except DomainError as exc:
                self.message_user(request, exc.message, messages.ERROR)
                return None
            self.message_user(request, f"{event.summary} (event {event.pk}).", messages.SUCCESS)
            return None
        return TemplateResponse(
            request,
            "admin/knowledge/entity/merge_confirm.html",
            {
                **self.admin_site.each_context(request),
                "title": "Merge entities",
                "entities": entities,
                "opts": self.model._meta,
                "action_checkbox_name": ACTION_CHECKBOX_NAME,
            },
        )

    @admin.action(description="Delete selected entities (reversible; names blocked)")
    def delete_selected_entities(self, request: HttpRequest, queryset: QuerySet[Entity]) -> None:
        self._each(request, queryset.filter(state=EntityState.ACTIVE), do_delete_entity)

    @admin.action(description="Restore selected deleted entities")
    def restore_selected_entities(self, request: HttpRequest, queryset: QuerySet[Entity]) -> None:
        self._each(request, queryset.filter(state=EntityState.DELETED), do_restore_entity)

    def _each(self, request: HttpRequest, queryset: QuerySet[Entity], action: Any) -> None:
        done = 0
        for entity in queryset.select_related("workspace"):
            try:
                action(workspace=entity.workspace, entity_id=entity.pk, actor=request.user)
                done += 1
            except DomainError as exc:
                self.message_user(request, f"{entity.name}: {exc.message}", messages.ERROR)
        self.message_user(request, f"{done} entit{'y' if done == 1 else 'ies'} changed.")


class RelationHistoryInline(admin.TabularInline):
    model = CurationEvent
    fk_name = "relation"
    fields = ("created_at", "action", "actor", "summary", "undone_by")
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    verbose_name_plural = "history"


class RelationNoteInline(admin.TabularInline):
    model = RelationNote
    fields = ("created_at", "actor", "reason", "chunk", "char_start", "char_end")
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    verbose_name_plural = "added by hand"


@admin.register(Relation)
class RelationAdmin(admin.ModelAdmin):
    list_display = ("source", "type", "target", "weight", "evidence_count", "state", "workspace")
    list_filter = ("state", ("type", admin.RelatedOnlyFieldListFilter), "workspace", "curated")
    search_fields = ("source__name", "target__name", "description")
    # Type and description are edited (through the curation actions); the ends change by
    # "Reverse selected", the rest is derived from evidence.
    readonly_fields = ("source", "target", "weight", "evidence_count", "keywords", "state",
                       "merged_into", "workspace", "curated", "description_curated")  # fmt: skip
    inlines = (RelationNoteInline, RelationHistoryInline)
    actions = ("delete_selected_relations", "reverse_selected")

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Deleting is a curation action (logged, undoable, held through re-extraction).
        return False

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Relations are added by hand in the explorer or the API, with a reason.
        return False

    def save_model(self, request: HttpRequest, obj: Relation, form: Any, change: bool) -> None:
        """A changed type and description go through `do_update_relation` (the retype and
        edit actions): each leaves an event, and the retype its rule."""
        before = Relation.objects.select_related("workspace").get(pk=obj.pk)
        changed = set(form.changed_data)
        try:
            do_update_relation(
                workspace=before.workspace,
                relation_id=obj.pk,
                type_name=obj.type.name if "type" in changed else None,
                description=obj.description if "description" in changed else None,
                actor=request.user,  # type: ignore[arg-type]
            )
        except DomainError as exc:
            self.message_user(request, exc.message, messages.ERROR)

    @admin.action(description="Delete selected relations (logged)")
    def delete_selected_relations(self, request: HttpRequest, queryset: QuerySet[Relation]) -> None:
        self._each(request, queryset.filter(state=EntityState.ACTIVE), do_delete_relation)

    @admin.action(description="Reverse selected")
    def reverse_selected(self, request: HttpRequest, queryset: QuerySet[Relation]) -> None:
        self._each(request, queryset.filter(state=EntityState.ACTIVE), do_reverse_relation)

    def _each(self, request: HttpRequest, queryset: QuerySet[Relation], action: Any) -> None:
        done = 0
        for relation in queryset.select_related("workspace").order_by("pk"):
            try:
                action(workspace=relation.workspace, relation_id=relation.pk, actor=request.user)
                done += 1
            except DomainError as exc:
                self.message_user(request, f"#{relation.pk}: {exc.message}", messages.ERROR)
        self.message_user(request, f"{done} relation{'' if done == 1 else 's'} changed.")


@admin.register(MergeSuggestion)
class MergeSuggestionAdmin(admin.ModelAdmin):
    list_display = ("entity_a", "entity_b", "score", "reasons", "status", "created_at")
    list_filter = ("status", "workspace")
    search_fields = ("entity_a__name", "entity_b__name")
    raw_id_fields = ("entity_a", "entity_b")
    readonly_fields = ("score", "reasons", "status", "decided_by", "decided_at", "workspace")
    actions = ("accept", "reject")

    @admin.action(description="Accept: merge each pair (into the one with more mentions)")
    def accept(self, request: HttpRequest, queryset: QuerySet[MergeSuggestion]) -> None:
        self._decide(request, queryset, do_accept_suggestion)

    @admin.action(description="Reject: not the same, never suggested again")
    def reject(self, request: HttpRequest, queryset: QuerySet[MergeSuggestion]) -> None:
        self._decide(request, queryset, do_reject_suggestion)

    def _decide(
        self, request: HttpRequest, queryset: QuerySet[MergeSuggestion], action: Any
    ) -> None:
        for suggestion in queryset.filter(status=SuggestionStatus.OPEN).select_related("workspace"):
            try:
                action(
                    workspace=suggestion.workspace,
                    suggestion_id=suggestion.pk,
                    actor=request.user,
                )
            except DomainError as exc:
                self.message_user(request, f"#{suggestion.pk}: {exc.message}", messages.ERROR)


@admin.register(CurationEvent)
class CurationEventAdmin(admin.ModelAdmin):
    list_display = ("created_at", "action", "actor", "summary", "undone_by", "workspace")
    list_filter = ("action", "workspace")
    search_fields = ("summary",)
    readonly_fields = ("workspace", "action", "actor", "entity", "relation", "payload",
                       "summary", "undone_by", "created_at")  # fmt: skip

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class TypeAdmin(admin.ModelAdmin):
    """Entity and relation types: read-mostly, with a workspace filter. The form edits the
    name (and a relation type's domain and range); status changes are the list's actions.
    Every change goes through the schema actions, so it is logged as a `TypeChange` and
    can be undone on the Schema page, and extraction's cache key follows."""

    kind: TypeKind = "entity"
    list_display = ("name", "status", "origin", "proposed_count", "workspace", "updated_at")
    list_filter = ("workspace", "status", "origin")
    search_fields = ("name", "description")
    readonly_fields = ("workspace", "description", "examples", "status", "origin",
                       "proposed_count", "created_by", "created_at", "updated_at")  # fmt: skip
    actions = ("accept_selected", "retire_selected")

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Types are added on the Schema page, the API or `manage.py schema`.
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Types are retired, never deleted: entities and relations point at them.
        return False

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if "name" not in form.changed_data:
            return
        before = type(obj).objects.select_related("workspace").get(pk=obj.pk)
        try:
            do_rename_type(
                workspace=before.workspace, kind=self.kind, name=before.name,
                new_name=obj.name, actor=request.user,  # type: ignore[arg-type]
            )  # fmt: skip
        except DomainError as exc:
            self.message_user(request, exc.message, messages.ERROR)

    @admin.action(description="Accept selected types (offered to extraction)")
    def accept_selected(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        self._each(request, queryset, do_accept_type)

    @admin.action(description="Retire selected types (no longer offered to extraction)")
    def retire_selected(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        self._each(request, queryset, do_retire_type)

    def _each(self, request: HttpRequest, queryset: QuerySet[Any], action: Any) -> None:
        done = 0
        for row in queryset.select_related("workspace").order_by("pk"):
            try:
                action(workspace=row.workspace, kind=self.kind, name=row.name, actor=request.user)
                done += 1
            except DomainError as exc:
                self.message_user(request, f"{row.name}: {exc.message}", messages.ERROR)
        self.message_user(request, f"{done} type{'' if done == 1 else 's'} changed.")


@admin.register(EntityType)
class EntityTypeAdmin(TypeAdmin):
    kind = "entity"
    fields = ("name", *TypeAdmin.readonly_fields)


@admin.register(RelationType)
class RelationTypeAdmin(TypeAdmin):
    kind = "relation"
    fields = ("name", "domain", "range", *TypeAdmin.readonly_fields)
    filter_horizontal = ("domain", "range")

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        """Domain and range offer the entity types of the type's own workspace."""
        resolved = getattr(request, "resolver_match", None)
        object_id = resolved.kwargs.get("object_id") if resolved else None
        row = RelationType.objects.filter(pk=object_id).first() if object_id else None
        if row is not None:
            kwargs["queryset"] = EntityType.objects.for_workspace(row.workspace)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """Domain and range go through `do_set_relation_domain` (validated, logged), never
        straight into the link tables."""
        if not {"domain", "range"} & set(form.changed_data):
            return
        row = form.instance
        try:
            do_set_relation_domain(
                workspace=row.workspace, name=RelationType.objects.get(pk=row.pk).name,
                domain=[t.name for t in form.cleaned_data["domain"]],
                range=[t.name for t in form.cleaned_data["range"]],
                actor=request.user,  # type: ignore[arg-type]
            )  # fmt: skip
        except DomainError as exc:
            self.message_user(request, exc.message, messages.ERROR)


@admin.register(SectionLabelOverride)
class SectionLabelOverrideAdmin(admin.ModelAdmin):
    """A person's word on a source's learnt section labels (the quality page's override).
    Saving and deleting go through `do_set_section_label`, as the page does; the label of
    a row is fixed once made (another label is another row)."""

    list_display = ("text", "structure", "source", "workspace", "created_by", "updated_at")
    list_filter = ("structure", "workspace")
    search_fields = ("text", "label")
    fields = ("source", "text", "structure", "label", "created_by", "updated_at")
    readonly_fields = ("label", "created_by", "updated_at")
    list_select_related = ("source", "workspace", "created_by")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        fixed = ("source", "text") if obj is not None else ()
        return (*fixed, *self.readonly_fields)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        try:
            saved = do_set_section_label(
                workspace=obj.source.workspace, source=obj.source, label=obj.text,
                structure=obj.structure, actor=request.user,
            )  # fmt: skip
        except DomainError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return
        if saved is not None:
            obj.pk = saved.pk

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        do_set_section_label(
            workspace=obj.source.workspace, source=obj.source, label=obj.text, structure=None
        )

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for row in queryset.select_related("source__workspace"):
            self.delete_model(request, row)
