"""`merge_entities`, `unmerge` and `undo_curation` (editor role): curation's actions, as
`POST …/entities/merge`, `POST …/entities/{id}/unmerge` and
`POST …/curation-events/{id}/undo` call them. A merge answers its event id, which `unmerge`
takes to undo it exactly; `undo_curation` undoes any curation event."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from agents.access import Access
from agents.results import ToolAnswer
from agents.tools.base import Arguments, ToolSpec
from knowledge.actions.curation.merge import do_merge_entities, do_unmerge
from knowledge.actions.curation.undo import do_undo_event
from knowledge.models import CurationEvent
from knowledge.schemas.curation import CurationEventOut, EntityOut
from knowledge.selectors.curation import find_merge_event, get_entity_for_workspace
from workspaces.models import MAX_ID, Role

EntityId = Annotated[int, Field(ge=1, le=MAX_ID)]


def curation_out(access: Access, event: CurationEvent, entity_id: int | None) -> dict[str, Any]:
    entity = get_entity_for_workspace(access.workspace, entity_id) if entity_id else None
    return {
        "event": CurationEventOut.model_validate(event).model_dump(mode="json"),
        "entity": EntityOut.model_validate(entity).model_dump(mode="json") if entity else None,
    }


class MergeArguments(Arguments):
    entity_ids: list[EntityId] = Field(
        ..., min_length=2, max_length=100, description="Ids of the entities that are one."
    )
    into: EntityId | None = Field(
        None, description="The survivor, which keeps its id (default: the most mentioned)."
    )


def run_merge(access: Access, args: MergeArguments) -> ToolAnswer:
    entities = [get_entity_for_workspace(access.workspace, pk) for pk in args.entity_ids]
    if args.into is not None and args.into not in args.entity_ids:
        get_entity_for_workspace(access.workspace, args.into)
    event = do_merge_entities(
        workspace=access.workspace,
        survivor_id=args.into,
        merged_ids=[e.pk for e in entities],
        actor=access.user,
    )
    survivor = event.payload["survivor"]["id"]
    data = curation_out(access, event, survivor)
    data["undo"] = {"tool": "unmerge", "arguments": {"event_id": event.pk}}
    return ToolAnswer(data=data)


class UnmergeArguments(Arguments):
    event_id: EntityId | None = Field(
        None, description="The merge to undo: the event id merge_entities answered."
    )
    entity_id: EntityId | None = Field(
        None, description="Or an entity: undoes the merge that absorbed it, or else its "
        "latest merge.",
    )  # fmt: skip

    @model_validator(mode="after")
    def one_of_them(self) -> UnmergeArguments:
        if self.event_id is None and self.entity_id is None:
            raise ValueError("give event_id (from merge_entities) or entity_id")
        return self


def run_unmerge(access: Access, args: UnmergeArguments) -> ToolAnswer:
    entity_id = args.entity_id
    event_id = args.event_id
    if event_id is None and entity_id is not None:
        entity = get_entity_for_workspace(access.workspace, entity_id)
        event_id = find_merge_event(access.workspace, entity).pk
    assert event_id is not None  # the arguments' validator requires one of the two
    event = do_unmerge(workspace=access.workspace, event_id=event_id, actor=access.user)
    target = entity_id or event.entity_id
    return ToolAnswer(data=curation_out(access, event, target))


class UndoArguments(Arguments):
    event_id: EntityId = Field(..., description="The curation event to undo (any action).")
    cascade: bool = Field(
        False,
        description="Also undo the later events that depend on it, newest first (without "
        "it, such an undo is refused with those events named).",
    )


def run_undo(access: Access, args: UndoArguments) -> ToolAnswer:
    event = do_undo_event(
        workspace=access.workspace, event_id=args.event_id, actor=access.user,
        cascade=args.cascade,
    )  # fmt: skip
    data = curation_out(access, event, event.entity_id if event.relation_id is None else None)
    data["relation_id"] = event.relation_id
    return ToolAnswer(data=data)


_WRITE_NOTE = " Needs the editor role; every curation action can be undone exactly."

TOOLS = [
    ToolSpec(
        name="merge_entities",
        title="Merge entities",
        description=(
            "Merges entities that are the same thing: mentions, aliases and relations move "
            "to the survivor, and the merged names stay pinned to it so later extraction "
            "lands there. Answers the curation `event` (its id undoes the merge: see "
            "`undo`) and the surviving entity." + _WRITE_NOTE
        ),
        arguments=MergeArguments,
        run=run_merge,
        role=Role.EDITOR,
    ),
    ToolSpec(
        name="unmerge",
        title="Undo a merge",
        description=(
            "Undoes a merge exactly (entities, aliases, mentions and relations as before), "
            "by the merge's event id or by an entity it involved; the pair is then "
            "remembered as not the same." + _WRITE_NOTE
        ),
        arguments=UnmergeArguments,
        run=run_unmerge,
        role=Role.EDITOR,
    ),
    ToolSpec(
        name="undo_curation",
        title="Undo a curation decision",
        description=(
            "Undoes any curation event exactly by its id: a merge (automatic ones too), "
            "delete, block, rename, retype, alias change, split, 'not the same' or relation "
            "change. Refused, naming the later event, when a later decision still stands on "
            "it (pass cascade to undo both, newest first); undo events are not undoable."
            + _WRITE_NOTE
        ),
        arguments=UndoArguments,
        run=run_undo,
        role=Role.EDITOR,
    ),
]
