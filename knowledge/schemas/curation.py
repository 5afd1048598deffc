"""Schemas of curation: entities as curation returns them, merges, splits, edits, the
event log and the review queue.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Field, Schema

from knowledge.schemas.entity import EntityBase
from knowledge.schemas.graph import RelationOut


class EntityOut(EntityBase):
    source_ids: list[int] = Field(..., description="sources whose documents mention it")
    first_seen_at: datetime | None
    last_seen_at: datetime | None
    state: str = Field(..., description="active | merged | deleted")
    merged_into: int | None
    curated: bool
    type_votes: dict[str, int] = Field(
        ..., description="how often the extractor gave each type to its mentions"
    )
    type_curated: bool = Field(..., description="a person set the type; votes do not change it")

    @staticmethod
    def resolve_type(obj: Any) -> str:
        return str(obj.type.name)

    @staticmethod
    def resolve_merged_into(obj: Any) -> int | None:
        return obj.merged_into_id


class MergeIn(Schema):
    entities: list[int] = Field(..., min_length=2, description="ids of the entities to merge")
    into: int | None = Field(
        None, description="the survivor (default: the one with the most mentions)"
    )


class UnmergeIn(Schema):
    event_id: int | None = Field(
        None,
        description="the merge to undo (default: the one that merged this entity away, "
        "or this entity's latest merge)",
    )


class EntityPatchIn(Schema):
    name: str | None = Field(None, min_length=1, max_length=300)
    type: str | None = Field(None, min_length=1, max_length=64)
    aliases: list[str] | None = Field(None, description="the complete alias list wanted")


class SplitIn(Schema):
    mention_ids: list[int] = Field(..., min_length=1)
    name: str = Field(..., min_length=1, max_length=300)
    type: str | None = None


class CurationEventOut(Schema):
    id: int
    action: str
    actor: str | None
    entity_id: int | None
    summary: str
    undone_by: int | None
    created_at: datetime

    @staticmethod
    def resolve_actor(obj: Any) -> str | None:
        return obj.actor.username if obj.actor_id else None

    @staticmethod
    def resolve_undone_by(obj: Any) -> int | None:
        return obj.undone_by_id


class CurationResult(Schema):
    event: CurationEventOut
    entity: EntityOut | None


class UndoEventOut(CurationEventOut):
    relation_id: int | None


class UndoResult(Schema):
    """An undo's own event, and what it put back: the relation for a relation change
    (null when the undo removed a hand-made one), the entity for an entity decision."""

    event: UndoEventOut
    relation: RelationOut | None = Field(
        ...,
        description="the relation now (null for entity decisions, or when an undo "
        "removed a hand-made relation)",
    )
    entity: EntityOut | None = Field(None, description="the entity now (null for relation changes)")

    @staticmethod
    def resolve_relation(obj: Any) -> Any:
        return obj["relation"]

    @staticmethod
    def resolve_entity(obj: Any) -> Any:
        return obj.get("entity")


class SuggestionOut(Schema):
    id: int
    entity_a: EntityOut
    entity_b: EntityOut
    score: float
    reasons: list[str]
    status: str = Field(..., description="open | accepted | rejected")
    llm_verdict: str = Field(..., description="the LLM's answer: same | different | unsure | ''")
    llm_reason: str
    created_at: datetime


class SuggestionAcceptIn(Schema):
    into: int | None = Field(None, description="the survivor (default: more mentions)")
