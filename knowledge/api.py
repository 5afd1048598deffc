"""The knowledge app's API: the schema registry and each source's extraction account."""

from __future__ import annotations

from typing import Any, Literal

from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Router, Status
from ninja.pagination import LimitOffsetPagination, paginate

from ingest.selectors import get_source_for_workspace
from knowledge.actions.curation import (
    default_survivor,
    do_accept_suggestion,
    do_delete_entity,
    do_merge_entities,
    do_reject_suggestion,
    do_rename_entity,
    do_restore_entity,
    do_retype_entity,
    do_set_aliases,
    do_split_entity,
    do_unmerge,
)
from knowledge.actions.extraction import do_request_extraction, estimate_source
from knowledge.actions.schema import (
    TypeKind,
    do_accept_type,
    do_add_type,
    do_ensure_default_schema,
    do_rename_type,
    do_retire_type,
)
from knowledge.models import SuggestionStatus
from knowledge.schemas import (
    CurationEventOut,
    CurationResult,
    EntityPatchIn,
    EstimateOut,
    ExtractIn,
    ExtractionOut,
    ExtractQueued,
    MergeIn,
    SchemaOut,
    SplitIn,
    SuggestionAcceptIn,
    SuggestionOut,
    TypeIn,
    TypeOut,
    TypeRenameIn,
    UnmergeIn,
    UsageOut,
)
from knowledge.selectors.curation import (
    find_merge_event,
    get_entity_for_workspace,
    list_curation_events,
    list_merge_suggestions,
)
from knowledge.selectors.extraction import get_extraction_summary, get_workspace_token_usage
from knowledge.selectors.schema import get_schema_snapshot, list_entity_types, list_relation_types
from workspaces.auth import get_caller, get_workspace_access
from workspaces.errors import InvalidInput
from workspaces.models import Role, Workspace

router = Router(tags=["knowledge"])

KindSegment = Literal["entity-types", "relation-types"]


def _kind(segment: str) -> TypeKind:
    return "entity" if segment == "entity-types" else "relation"


def _type_out(workspace: Workspace, kind: TypeKind, name: str) -> dict[str, Any]:
    rows = list_entity_types(workspace) if kind == "entity" else list_relation_types(workspace)
    row = next(r for r in rows if r.name == name)
    return TypeOut.model_validate(row).model_dump()


@router.get("/workspaces/{slug}/schema", response=SchemaOut, summary="The schema registry")
def get_schema(request: HttpRequest, slug: str) -> dict[str, Any]:
    """Entity and relation types with their status (active, proposed, retired). Only active
    types are offered to extraction."""
    workspace = get_workspace_access(request, slug).workspace
    do_ensure_default_schema(workspace=workspace)
    return {
        "entity_types": list_entity_types(workspace),
        "relation_types": list_relation_types(workspace),
        "schema_hash": get_schema_snapshot(workspace).hash,
    }


@router.post(
    "/workspaces/{slug}/schema/{kind}",
    response={201: TypeOut},
    summary="Add an entity or relation type",
)
def add_type(
    request: HttpRequest, slug: str, kind: KindSegment, payload: TypeIn
) -> Status[dict[str, Any]]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    created = do_add_type(
        workspace=workspace,
        kind=_kind(kind),
        name=payload.name,
        description=payload.description,
        examples=payload.examples,
        created_by=get_caller(request).user,
    )
    return Status(201, _type_out(workspace, _kind(kind), created.name))


@router.post(
    "/workspaces/{slug}/schema/{kind}/{name}/accept",
    response=TypeOut,
    summary="Accept a proposed (or retired) type",
)
def accept_type(request: HttpRequest, slug: str, kind: KindSegment, name: str) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    accepted = do_accept_type(workspace=workspace, kind=_kind(kind), name=name)
    return _type_out(workspace, _kind(kind), accepted.name)


@router.post(
    "/workspaces/{slug}/schema/{kind}/{name}/retire",
    response=TypeOut,
    summary="Retire a type (no longer offered to extraction)",
)
def retire_type(request: HttpRequest, slug: str, kind: KindSegment, name: str) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    retired = do_retire_type(workspace=workspace, kind=_kind(kind), name=name)
    return _type_out(workspace, _kind(kind), retired.name)


@router.patch("/workspaces/{slug}/schema/{kind}/{name}", response=TypeOut, summary="Rename a type")
def rename_type(
    request: HttpRequest, slug: str, kind: KindSegment, name: str, payload: TypeRenameIn
) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    renamed = do_rename_type(
        workspace=workspace, kind=_kind(kind), name=name, new_name=payload.name
    )
    return _type_out(workspace, _kind(kind), renamed.name)


@router.get(
    "/workspaces/{slug}/sources/{source_id}/extraction",
    response=ExtractionOut,
    summary="A source's extraction: extractor, status, runs, counts, tokens, cost",
)
def get_extraction(request: HttpRequest, slug: str, source_id: int) -> dict[str, Any]:
    """`offline` is true when the offline (spaCy) extractor produced the results: no LLM was
    configured. `status` budget_exceeded means the source's token budget stopped it."""
    workspace = get_workspace_access(request, slug).workspace
    source = get_source_for_workspace(workspace, source_id)
    return get_extraction_summary(workspace, source)


@router.get(
    "/workspaces/{slug}/sources/{source_id}/extraction/estimate",
    response=EstimateOut,
    summary="Tokens and cost of extracting the source now (nothing is called)",
)
def get_estimate(request: HttpRequest, slug: str, source_id: int) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug).workspace
    source = get_source_for_workspace(workspace, source_id)
    return estimate_source(source=source).as_dict()


@router.post(
    "/workspaces/{slug}/sources/{source_id}/extract",
    response={202: ExtractQueued},
    summary="Extract the source again in the background (cached windows cost nothing)",
)
def extract_source(
    request: HttpRequest, slug: str, source_id: int, payload: ExtractIn
) -> Status[dict[str, Any]]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    source = get_source_for_workspace(workspace, source_id)
    with transaction.atomic():
        do_request_extraction(source=source, force=payload.force)
    return Status(202, {"source_id": source.pk, "queued": True})


@router.get(
    "/workspaces/{slug}/usage", response=UsageOut, summary="LLM token usage of the workspace"
)
def get_usage(request: HttpRequest, slug: str) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug).workspace
    return get_workspace_token_usage(workspace)


# --- Curation ------------------------------------------------------------------------


def _result(workspace: Workspace, event: Any, entity_id: int | None) -> dict[str, Any]:
    entity = get_entity_for_workspace(workspace, entity_id) if entity_id else None
    return {"event": event, "entity": entity}


@router.post(
    "/workspaces/{slug}/entities/merge",
    response=CurationResult,
    summary="Merge entities into one (undo with unmerge)",
)
def merge_entities(request: HttpRequest, slug: str, payload: MergeIn) -> dict[str, Any]:
    """Mentions, aliases and relations move to the survivor (`into`, default: the one with
    the most mentions); self-loops and duplicate edges are folded. The merged names stay
    pinned to the survivor, so re-extraction lands there."""
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    entities = [get_entity_for_workspace(workspace, pk) for pk in payload.entities]
    survivor = payload.into
    if survivor is None:
        survivor = default_survivor(entities).pk
    elif survivor not in payload.entities:
        get_entity_for_workspace(workspace, survivor)
    event = do_merge_entities(
        workspace=workspace,
        survivor_id=survivor,
        merged_ids=[e.pk for e in entities],
        actor=get_caller(request).user,
    )
    return _result(workspace, event, survivor)


@router.post(
    "/workspaces/{slug}/entities/{entity_id}/unmerge",
    response=CurationResult,
    summary="Undo a merge exactly",
)
def unmerge_entity(
    request: HttpRequest, slug: str, entity_id: int, payload: UnmergeIn
) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    entity = get_entity_for_workspace(workspace, entity_id)
    event_id = payload.event_id or find_merge_event(workspace, entity).pk
    event = do_unmerge(workspace=workspace, event_id=event_id, actor=get_caller(request).user)
    return _result(workspace, event, entity.pk)


@router.patch(
    "/workspaces/{slug}/entities/{entity_id}",
    response=CurationResult,
    summary="Rename, retype or set the aliases of an entity",
)
def patch_entity(
    request: HttpRequest, slug: str, entity_id: int, payload: EntityPatchIn
) -> dict[str, Any]:
    """Each change is its own curation event; the last one is returned."""
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    entity = get_entity_for_workspace(workspace, entity_id)
    actor = get_caller(request).user
    events = []
    with transaction.atomic():
        if payload.name is not None and payload.name != entity.name:
            events.append(
                do_rename_entity(
                    workspace=workspace, entity_id=entity.pk, name=payload.name, actor=actor
                )
            )
        if payload.type is not None and payload.type != entity.type.name:
            events.append(
                do_retype_entity(
                    workspace=workspace, entity_id=entity.pk, type_name=payload.type, actor=actor
                )
            )
        if payload.aliases is not None:
            events += do_set_aliases(
                workspace=workspace, entity_id=entity.pk, names=payload.aliases, actor=actor
            )
    if not events:
        raise InvalidInput("Nothing to change: send name, type or aliases.")
    return _result(workspace, events[-1], entity.pk)


@router.delete(
    "/workspaces/{slug}/entities/{entity_id}",
    response=CurationResult,
    summary="Delete an entity (its names are blocked; restore undoes both)",
)
def delete_entity(request: HttpRequest, slug: str, entity_id: int) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    entity = get_entity_for_workspace(workspace, entity_id)
    event = do_delete_entity(
        workspace=workspace, entity_id=entity.pk, actor=get_caller(request).user
    )
    return _result(workspace, event, entity.pk)


@router.post(
    "/workspaces/{slug}/entities/{entity_id}/restore",
    response=CurationResult,
    summary="Restore a deleted entity",
)
def restore_entity(request: HttpRequest, slug: str, entity_id: int) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    entity = get_entity_for_workspace(workspace, entity_id)
    event = do_restore_entity(
        workspace=workspace, entity_id=entity.pk, actor=get_caller(request).user
    )
    return _result(workspace, event, entity.pk)


@router.post(
    "/workspaces/{slug}/entities/{entity_id}/split",
    response=CurationResult,
    summary="Move chosen mentions to a new entity",
)
def split_entity(
    request: HttpRequest, slug: str, entity_id: int, payload: SplitIn
) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    entity = get_entity_for_workspace(workspace, entity_id)
    event = do_split_entity(
        workspace=workspace,
        entity_id=entity.pk,
        mention_ids=payload.mention_ids,
        name=payload.name,
        type_name=payload.type,
        actor=get_caller(request).user,
    )
    return _result(workspace, event, event.payload["new_entity"])


@router.get(
    "/workspaces/{slug}/merge-suggestions",
    response=list[SuggestionOut],
    summary="The review queue: pairs that may be the same entity",
)
@paginate(LimitOffsetPagination)
def merge_suggestions(request: HttpRequest, slug: str, status: str = "open") -> QuerySet[Any]:
    """`status`: open (default), accepted or rejected."""
    workspace = get_workspace_access(request, slug).workspace
    if status not in SuggestionStatus.values:
        raise InvalidInput(f"status: one of {', '.join(SuggestionStatus.values)}.")
    return list_merge_suggestions(workspace, status=status)


@router.post(
    "/workspaces/{slug}/merge-suggestions/{suggestion_id}/accept",
    response=CurationResult,
    summary="Accept: merge the pair",
)
def accept_suggestion(
    request: HttpRequest, slug: str, suggestion_id: int, payload: SuggestionAcceptIn
) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    event = do_accept_suggestion(
        workspace=workspace,
        suggestion_id=suggestion_id,
        into=payload.into,
        actor=get_caller(request).user,
    )
    return _result(workspace, event, event.entity_id)


@router.post(
    "/workspaces/{slug}/merge-suggestions/{suggestion_id}/reject",
    response=CurationResult,
    summary="Reject: not the same, never suggested again",
)
def reject_suggestion(request: HttpRequest, slug: str, suggestion_id: int) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    event = do_reject_suggestion(
        workspace=workspace, suggestion_id=suggestion_id, actor=get_caller(request).user
    )
    return _result(workspace, event, None)


@router.get(
    "/workspaces/{slug}/curation-events",
    response=list[CurationEventOut],
    summary="Curation history, newest first",
)
@paginate(LimitOffsetPagination)
def curation_events(request: HttpRequest, slug: str, entity: int | None = None) -> QuerySet[Any]:
    workspace = get_workspace_access(request, slug).workspace
    return list_curation_events(workspace, entity_id=entity)
