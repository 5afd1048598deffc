"""Schemas of the schema registry: entity and relation types, proposed, accepted, retired."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Field, Schema


class TypeOut(Schema):
    id: int
    name: str
    description: str
    examples: list[str]
    status: str = Field(..., description="active | proposed | retired")
    origin: str = Field(..., description="default | user | model | offline")
    proposed_count: int = Field(..., description="how often extraction asked for it")
    used_by: int = Field(..., description="entities (or relations) of this type")
    created_at: datetime

    @staticmethod
    def resolve_used_by(obj: Any) -> int:
        return int(getattr(obj, "entity_count", None) or getattr(obj, "relation_count", 0) or 0)


class SchemaOut(Schema):
    entity_types: list[TypeOut]
    relation_types: list[TypeOut]
    schema_hash: str = Field(..., description="hash of the active types (part of the cache key)")


class TypeIn(Schema):
    name: str = Field(..., min_length=1, max_length=64)
    description: str = Field("", max_length=2000)
    examples: list[str] = Field(default_factory=list, max_length=20)


class TypeRenameIn(Schema):
    name: str = Field(..., min_length=1, max_length=64, description="the new name")
