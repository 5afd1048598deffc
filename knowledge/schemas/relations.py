"""Schemas of relation curation: what a curator sends to change, add or describe a
relation, and what every relation write answers (the event and the relation as the graph
API shapes it).
"""

from __future__ import annotations

from typing import Any

from ninja import Field, Schema

from knowledge.schemas.curation import CurationEventOut
from knowledge.schemas.graph import RelationOut
from workspaces.models import MAX_ID


class RelationPatchIn(Schema):
    type: str | None = Field(None, min_length=1, max_length=64, description="a registered type")
    description: str | None = Field(
        None, max_length=2000, description="replaces the description extraction derived"
    )


class RelationIn(Schema):
    source_id: int = Field(..., ge=1, le=MAX_ID)
    target_id: int = Field(..., ge=1, le=MAX_ID)
    type: str = Field(..., min_length=1, max_length=64, description="a registered type")
    description: str = Field("", max_length=2000)
    reason: str = Field("", max_length=2000, description="why it was added (kept with it)")
    chunk_id: int | None = Field(
        None, ge=1, le=MAX_ID, description="a chunk of this workspace that shows it"
    )
    char_start: int | None = Field(
        None, ge=0, le=MAX_ID, description="document offsets inside the chunk (with char_end)"
    )
    char_end: int | None = Field(None, ge=0, le=MAX_ID)


class RelationEventOut(CurationEventOut):
    relation_id: int | None


class RelationCurationResult(Schema):
    event: RelationEventOut
    relation: RelationOut | None = Field(
        ..., description="the relation now (null when an undo removed a hand-made one)"
    )

    @staticmethod
    def resolve_relation(obj: Any) -> Any:
        return obj["relation"]
