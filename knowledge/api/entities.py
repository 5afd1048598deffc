"""Entities: the list, one entity with its evidence, its neighbourhood, and every curation
action on it (edit, merge, unmerge, split, delete, restore). GET and PATCH of
`entities/{id}` share a path, so they share this router.
"""

# No `from __future__ import annotations` here: ninja resolves the parameters of a view
# wrapped by @paginate in the wrapper's module, where string annotations name nothing.
import time
from datetime import datetime
from typing import Annotated, Any, Literal

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Query, Router
from ninja.pagination import paginate

from knowledge.actions.curation.entities import (
    do_delete_entity,
    do_restore_entity,
    do_split_entity,
    do_update_entity,
)
from knowledge.actions.curation.merge import do_merge_entities, do_unmerge
from knowledge.api.params import Pagination, StateFilter, utc
from knowledge.graph.base import MAX_HOPS
from knowledge.schemas.curation import (
    CurationResult,
    EntityPatchIn,
    MergeIn,
    SplitIn,
    UnmergeIn,
)
from knowledge.schemas.graph import (
    EntityDetailOut,
    EntityListOut,
    GraphOut,
)
from knowledge.selectors.curation import (
    find_merge_event,
    get_entity_for_workspace,
)
from knowledge.selectors.entities import (
    MAX_EVIDENCE,
    EntityOrder,
    NameMatch,
    get_entity_detail,
    search_entities,
)
from knowledge.selectors.graph import (
    get_neighborhood,
)
from knowledge.selectors.params import MAX_GRAPH_NODES, parse_names
from system.metrics import observe_graph_query
from workspaces.auth import get_caller, get_workspace_access
from workspaces.errors import InvalidInput
from workspaces.models import MAX_ID, Role, Workspace

router = Router(tags=["knowledge"])
# The operation ids clients generated code from (config/api.py).
OPERATION_ID_PREFIX = "knowledge_api"


def curation_result(workspace: Workspace, event: Any, entity_id: int | None) -> dict[str, Any]:
    entity = get_entity_for_workspace(workspace, entity_id) if entity_id else None
    return {"event": event, "entity": entity}


# Before `entities/{entity_id}`: URL patterns match in order, and "merge" is not an id.
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
    if payload.into is not None and payload.into not in payload.entities:
        get_entity_for_workspace(workspace, payload.into)
    event = do_merge_entities(
        workspace=workspace,
        survivor_id=payload.into,
        merged_ids=[e.pk for e in entities],
        actor=get_caller(request).user,
    )
    return curation_result(workspace, event, event.payload["survivor"]["id"])


@router.get(
    "/workspaces/{slug}/entities",
    operation_id="knowledge_graph_api_list_entities",
    response=list[EntityListOut],
    summary="Entities: search by name or alias, filter by type, source, time and degree",
)
@paginate(Pagination)
def list_entities(
    request: HttpRequest,
    slug: str,
    q: Annotated[str | None, Query(max_length=300, description="name or alias")] = None,
    match: Annotated[
        NameMatch,
        Query(
            description="words: the name or an alias starts with q, or every word of q starts "
            "a word of the name or of an alias, one typo forgiven in words of 4+ characters, "
            "ignoring case, accents and punctuation (indexed); prefix: only the name or an "
            "alias starting with q; contains: q anywhere in a name or alias, ignoring case"
        ),
    ] = "words",
    type: Annotated[str | None, Query(max_length=64, description="entity type name")] = None,
    source: Annotated[
        int | None, Query(ge=1, le=MAX_ID, description="mentioned by this source")
    ] = None,
    seen_after: Annotated[datetime | None, Query(description="last seen at or after")] = None,
    seen_before: Annotated[datetime | None, Query(description="first seen at or before")] = None,
    min_degree: Annotated[int | None, Query(ge=0, le=1_000_000_000)] = None,
    state: Annotated[StateFilter, Query()] = "active",
    order: Annotated[
        EntityOrder,
        Query(
            description="relevance (with q: exact name, then name prefix, then word prefix, "
            "then one typo; ties by degree, then mentions; without q: by name) | name | "
            "-degree | -mention_count | ..."
        ),
    ] = "relevance",
) -> QuerySet[Any]:
    workspace = get_workspace_access(request, slug).workspace
    return search_entities(
        workspace,
        q=q,
        match=match,
        entity_type=type,
        source_id=source,
        seen_after=utc(seen_after, label="seen_after"),
        seen_before=utc(seen_before, label="seen_before"),
        min_degree=min_degree,
        state=state,
        order=order,
    )


@router.get(
    "/workspaces/{slug}/entities/{entity_id}",
    operation_id="knowledge_graph_api_get_entity",
    response=EntityDetailOut,
    summary="One entity: aliases, types, counts, sources, relation counts, evidence",
)
def get_entity(
    request: HttpRequest,
    slug: str,
    entity_id: int,
    evidence_limit: Annotated[int, Query(ge=0, le=MAX_EVIDENCE)] = 20,
) -> dict[str, Any]:
    """Merged and deleted entities answer too (`state`, `merged_into`), so an old link can
    be followed to the survivor. `evidence`: the newest mentions with the text around
    each (document offsets, so `snippet_start` places the snippet in the document)."""
    workspace = get_workspace_access(request, slug).workspace
    return get_entity_detail(workspace, entity_id, evidence_limit=evidence_limit)


@router.get(
    "/workspaces/{slug}/entities/{entity_id}/neighborhood",
    operation_id="knowledge_graph_api_entity_neighborhood",
    response=GraphOut,
    summary="The entity and what lies within a few hops of it",
)
def entity_neighborhood(
    request: HttpRequest,
    slug: str,
    entity_id: int,
    hops: Annotated[int, Query(ge=1, le=MAX_HOPS)] = 1,
    relation_types: Annotated[str | None, Query(description="comma-separated; default any")] = None,
    entity_types: Annotated[
        str | None,
        Query(description="comma-separated; filters the nodes reached (the entity stays)"),
    ] = None,
    direction: Annotated[Literal["out", "in", "both"], Query()] = "both",
    limit: Annotated[int, Query(ge=1, le=MAX_GRAPH_NODES, description="most nodes returned")] = 500,
) -> dict[str, Any]:
    """Nodes nearest first (`depth` = hops from the entity); `truncated` when `limit` cut
    it. A merged or deleted entity has no neighbourhood (empty nodes)."""
    workspace = get_workspace_access(request, slug).workspace
    started = time.perf_counter()
    answer = get_neighborhood(
        workspace,
        entity_id,
        hops=hops,
        relation_types=parse_names(relation_types),
        entity_types=parse_names(entity_types),
        direction=direction,
        limit=limit,
    )
    observe_graph_query("neighbourhood", time.perf_counter() - started)
    return answer


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
    return curation_result(workspace, event, entity.pk)


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
    events = do_update_entity(
        workspace=workspace,
        entity_id=entity.pk,
        name=payload.name,
        type_name=payload.type,
        aliases=payload.aliases,
        actor=get_caller(request).user,
    )
    if not events:
        raise InvalidInput("Nothing to change: send name, type or aliases.")
    return curation_result(workspace, events[-1], entity.pk)


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
    return curation_result(workspace, event, entity.pk)


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
    return curation_result(workspace, event, entity.pk)


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
    return curation_result(workspace, event, event.payload["new_entity"])
