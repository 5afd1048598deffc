"""Relation curation for agents (editor role): `add_relation`, `update_relation`,
`delete_relation`, `reverse_relation` and `undo_relation_change` call the relation actions
(knowledge/actions/curation/relations.py) exactly as `POST/PATCH/DELETE …/relations` and
`POST …/curation-events/{id}/undo` do, and answer the same shape: the curation event and
the relation as it is now. Each change is undone exactly by `undo_relation_change` with
the event id it answered."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from agents.access import Access
from agents.results import ToolAnswer
from agents.tools.base import Arguments, ToolSpec
from knowledge.actions.curation.relations import (
    do_add_relation,
    do_delete_relation,
    do_reverse_relation,
    do_undo_relation_event,
    do_update_relation,
)
from knowledge.models import CurationEvent
from knowledge.schemas.relations import RelationCurationResult
from knowledge.selectors.relations import get_relation_change
from workspaces.models import MAX_ID, Role

Id = Annotated[int, Field(ge=1, le=MAX_ID)]
TypeName = Annotated[str, Field(min_length=1, max_length=64)]


def relation_answer(access: Access, event: CurationEvent) -> ToolAnswer:
    """The event, the relation as it is now (null when an undo removed a hand-made one)
    and the call that undoes the change."""
    data: dict[str, Any] = RelationCurationResult.model_validate(
        get_relation_change(access.workspace, event)
    ).model_dump(mode="json")
    if event.action != "relation_undo":
        data["undo"] = {"tool": "undo_relation_change", "arguments": {"event_id": event.pk}}
    return ToolAnswer(data=data)


class AddRelationArguments(Arguments):
    source_id: Id = Field(..., description="The entity the relation goes from.")
    target_id: Id = Field(..., description="The entity it goes to.")
    type: TypeName = Field(
        ..., description="A relation type of the workspace (see graph_stats), e.g. works_for."
    )
    description: str = Field("", max_length=2000, description="What the relation says.")
    reason: str = Field(
        "", max_length=500, description="Why it is added (kept with it, with who added it)."
    )
    chunk_id: Id | None = Field(
        None, description="A passage that shows it (a chunk id from search), optional."
    )
    char_start: int | None = Field(None, ge=0, description="With chunk_id: the span's start.")
    char_end: int | None = Field(None, ge=0, description="With chunk_id: the span's end.")


def run_add(access: Access, args: AddRelationArguments) -> ToolAnswer:
    event = do_add_relation(
        workspace=access.workspace,
        source_id=args.source_id,
        target_id=args.target_id,
        type_name=args.type,
        description=args.description,
        reason=args.reason,
        chunk_id=args.chunk_id,
        char_start=args.char_start,
        char_end=args.char_end,
        actor=access.user,
    )
    return relation_answer(access, event)


class UpdateRelationArguments(Arguments):
    relation_id: Id
    type: TypeName | None = Field(None, description="The new relation type.")
    description: str | None = Field(
        None, max_length=2000, description="The new description (no longer taken from evidence)."
    )

    @model_validator(mode="after")
    def something_to_change(self) -> UpdateRelationArguments:
        if self.type is None and self.description is None:
            raise ValueError("give type, description or both")
        return self


def run_update(access: Access, args: UpdateRelationArguments) -> ToolAnswer:
    events = do_update_relation(
        workspace=access.workspace,
        relation_id=args.relation_id,
        type_name=args.type,
        description=args.description,
        actor=access.user,
    )
    return relation_answer(access, events[-1])


class RelationIdArguments(Arguments):
    relation_id: Id


def run_delete(access: Access, args: RelationIdArguments) -> ToolAnswer:
    event = do_delete_relation(
        workspace=access.workspace, relation_id=args.relation_id, actor=access.user
    )
    return relation_answer(access, event)


def run_reverse(access: Access, args: RelationIdArguments) -> ToolAnswer:
    event = do_reverse_relation(
        workspace=access.workspace, relation_id=args.relation_id, actor=access.user
    )
    return relation_answer(access, event)


class UndoArguments(Arguments):
    event_id: Id = Field(..., description="The event a relation tool answered.")


def run_undo(access: Access, args: UndoArguments) -> ToolAnswer:
    event = do_undo_relation_event(
        workspace=access.workspace, event_id=args.event_id, actor=access.user
    )
    return relation_answer(access, event)


_NOTE = (
    " Needs the editor role. The rule it leaves holds when documents are extracted again; "
    "`undo_relation_change` with the answered event id undoes it exactly."
)

TOOLS = [
    ToolSpec(
        name="add_relation",
        title="Add a relation",
        description=(
            "Adds a relation by hand between two entities (ids from search or "
            "list_entities), with why and optionally the passage that shows it. Refused "
            "when the same relation (same ends and type) already exists." + _NOTE
        ),
        arguments=AddRelationArguments,
        run=run_add,
        role=Role.EDITOR,
    ),
    ToolSpec(
        name="update_relation",
        title="Retype or describe a relation",
        description="Changes a relation's type and/or its description." + _NOTE,
        arguments=UpdateRelationArguments,
        run=run_update,
        role=Role.EDITOR,
    ),
    ToolSpec(
        name="delete_relation",
        title="Delete a relation",
        description=("Deletes a wrong relation; extraction does not bring it back." + _NOTE),
        arguments=RelationIdArguments,
        run=run_delete,
        role=Role.EDITOR,
    ),
    ToolSpec(
        name="reverse_relation",
        title="Reverse a relation",
        description="Swaps a relation's source and target (its direction was wrong)." + _NOTE,
        arguments=RelationIdArguments,
        run=run_reverse,
        role=Role.EDITOR,
    ),
    ToolSpec(
        name="undo_relation_change",
        title="Undo a relation change",
        description=(
            "Puts a relation back exactly as it was before a change (by the change's event "
            "id). Refused, naming it, when a later change to the same relation still stands: "
            "undo that one first. Needs the editor role."
        ),
        arguments=UndoArguments,
        run=run_undo,
        role=Role.EDITOR,
    ),
]
