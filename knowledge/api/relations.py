"""Relations: the list and one relation with its evidence (readers), and every curation
action on a relation (editors): delete, retype or describe (PATCH), reverse, add by hand,
and the undo of any curation event (written for relation changes first, so it stays
here). Reads and writes of `relations` and `relations/{id}` share paths, so they share
this router.
"""

# No `from __future__ import annotations` here: ninja resolves the parameters of a view
# wrapped by @paginate in the wrapper's module, where string annotations name nothing.
from typing import Annotated, Any

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Query, Router
from ninja.pagination import paginate

from knowledge.actions.curation.relations import (
    do_add_relation,
    do_delete_relation,
    do_reverse_relation,
    do_update_relation,
)
from knowledge.actions.curation.undo import do_undo_event
from knowledge.api.params import Pagination, StateFilter
from knowledge.schemas.curation import UndoResult
from knowledge.schemas.graph import RelationDetailOut, RelationOut
from knowledge.schemas.relations import RelationCurationResult, RelationIn, RelationPatchIn
from knowledge.selectors.curation import get_entity_for_workspace
from knowledge.selectors.entities import MAX_EVIDENCE
from knowledge.selectors.relations import (
    get_relation_change,
    get_relation_detail,
    list_relations,
)
from workspaces.auth import get_caller, get_workspace_access
from workspaces.errors import InvalidInput
from workspaces.models import MAX_ID, Role

router = Router(tags=["knowledge"])
# The operation ids clients generated code from (config/api.py): these reads were written
# in knowledge/api/graph.py first.
OPERATION_ID_PREFIX = "knowledge_graph_api"


@router.get(
    "/workspaces/{slug}/relations",
    response=list[RelationOut],
    summary="Relations: filter by source, target, either end, type",
)
@paginate(Pagination)
def relations(
    request: HttpRequest,
    slug: str,
    source: Annotated[int | None, Query(ge=1, le=MAX_ID, description="source entity id")] = None,
    target: Annotated[int | None, Query(ge=1, le=MAX_ID, description="target entity id")] = None,
    entity: Annotated[int | None, Query(ge=1, le=MAX_ID, description="either end")] = None,
    type: Annotated[str | None, Query(max_length=64, description="relation type name")] = None,
    state: Annotated[StateFilter, Query()] = "active",
) -> QuerySet[Any]:
    """Strongest (highest weight) first."""
    workspace = get_workspace_access(request, slug).workspace
    return list_relations(
        workspace,
        source_id=source,
        target_id=target,
        entity_id=entity,
        relation_type=type,
        state=state,
    )


@router.get(
    "/workspaces/{slug}/relations/{relation_id}",
    response=RelationDetailOut,
    summary="One relation and its evidence",
)
def get_relation(
    request: HttpRequest,
    slug: str,
    relation_id: int,
    evidence_limit: Annotated[int, Query(ge=0, le=MAX_EVIDENCE)] = 20,
) -> dict[str, Any]:
    """Each evidence row: its chunk and document, the sentence span (document offsets) and
    the sentence, the extractor's description and strength (0..10)."""
    workspace = get_workspace_access(request, slug).workspace
    return get_relation_detail(workspace, relation_id, evidence_limit=evidence_limit)


@router.post(
    "/workspaces/{slug}/relations",
    response=RelationCurationResult,
    summary="Add a relation by hand (who added it and why are kept with it)",
)
def add_relation(request: HttpRequest, slug: str, payload: RelationIn) -> dict[str, Any]:
    """Between two active entities of the workspace, of a registered (active or proposed)
    type; 409 when that edge exists. `chunk_id` (with `char_start`/`char_end`, document
    offsets inside the chunk) points at the text that shows it. The relation and its ends
    are curated: deleting sources never deletes them."""
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    event = do_add_relation(
        workspace=workspace,
        source_id=payload.source_id,
        target_id=payload.target_id,
        type_name=payload.type,
        description=payload.description,
        reason=payload.reason,
        chunk_id=payload.chunk_id,
        char_start=payload.char_start,
        char_end=payload.char_end,
        actor=get_caller(request).user,
    )
    return get_relation_change(workspace, event)


@router.patch(
    "/workspaces/{slug}/relations/{relation_id}",
    response=RelationCurationResult,
    summary="Retype a relation or replace its description",
)
def patch_relation(
    request: HttpRequest, slug: str, relation_id: int, payload: RelationPatchIn
) -> dict[str, Any]:
    """Each change is its own curation event (the last one is returned); extraction of the
    old type lands on the retyped relation, and evidence no longer rewrites a description
    set here."""
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    events = do_update_relation(
        workspace=workspace,
        relation_id=relation_id,
        type_name=payload.type,
        description=payload.description,
        actor=get_caller(request).user,
    )
    if not events:
        raise InvalidInput("Nothing to change: send type or description.")
    return get_relation_change(workspace, events[-1])


@router.delete(
    "/workspaces/{slug}/relations/{relation_id}",
    response=RelationCurationResult,
    summary="Delete a relation (extraction does not bring it back; undo restores it)",
)
def delete_relation(request: HttpRequest, slug: str, relation_id: int) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    event = do_delete_relation(
        workspace=workspace, relation_id=relation_id, actor=get_caller(request).user
    )
    return get_relation_change(workspace, event)


@router.post(
    "/workspaces/{slug}/relations/{relation_id}/reverse",
    response=RelationCurationResult,
    summary="Swap a relation's source and target",
)
def reverse_relation(request: HttpRequest, slug: str, relation_id: int) -> dict[str, Any]:
    """409 when the reversed edge exists already (delete one of the two instead)."""
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    event = do_reverse_relation(
        workspace=workspace, relation_id=relation_id, actor=get_caller(request).user
    )
    return get_relation_change(workspace, event)


@router.post(
    "/workspaces/{slug}/curation-events/{event_id}/undo",
    response=UndoResult,
    summary="Undo any curation decision exactly",
)
def undo_relation_event(
    request: HttpRequest,
    slug: str,
    event_id: int,
    cascade: Annotated[
        bool, Query(description="undo the later decisions that depend on it first, newest first")
    ] = False,
) -> dict[str, Any]:
    """Any event: a merge (automatic ones too) is unmerged, a deletion restored, a rename,
    retype, alias change, split, block or "not the same" put back, a relation change
    reverted. 409 names the later event that still stands on it (undo that one first, or
    pass `cascade`), or says it was undone already; undo events are not undoable."""
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    event = do_undo_event(
        workspace=workspace, event_id=event_id, actor=get_caller(request).user, cascade=cascade
    )
    result = get_relation_change(workspace, event)
    entity = None
    if event.relation_id is None and event.entity_id is not None:
        entity = get_entity_for_workspace(workspace, event.entity_id)
    return {**result, "entity": entity}
