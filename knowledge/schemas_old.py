"""API schemas of the knowledge app; every field listed explicitly."""

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


class RunOut(Schema):
    id: int
    window_hash: str
    extractor: str
    model: str
    prompt_version: str
    schema_hash: str
    passes: int
    prompt_tokens: int
    completion_tokens: int
    duration_ms: int
    counts: dict[str, int]
    problems: list[str]
    entities: int
    relations: int
    created_at: datetime

    @staticmethod
    def resolve_entities(obj: Any) -> int:
        return len((obj.result or {}).get("entities") or [])

    @staticmethod
    def resolve_relations(obj: Any) -> int:
        return len((obj.result or {}).get("relations") or [])


class TokensOut(Schema):
    prompt: int
    completion: int
    total: int


class WindowsOut(Schema):
    extracted: int = Field(..., description="windows sent to the extractor")
    cached: int = Field(..., description="windows answered from the extraction cache")
    skipped: int = Field(..., description="windows left out because the budget was reached")


class EstimateOut(Schema):
    extractor: str
    model: str
    windows: int
    cached_windows: int
    windows_to_extract: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost: float = Field(..., description="US dollars at LLM_PRICE_*_PER_MTOK")
    budget: int | None


class ExtractionOut(Schema):
    source_id: int
    extractor: str = Field(..., description="llm | offline | '' (not run yet)")
    offline: bool = Field(..., description="true when the offline (spaCy) extractor produced it")
    model: str
    status: str = Field(..., description="pending | running | done | budget_exceeded | failed")
    message: str
    known_only: bool
    token_budget: int | None
    tokens: TokensOut
    calls: int
    cost: float
    windows: WindowsOut
    counts: dict[str, int]
    entities: int = Field(..., description="distinct entities with evidence in this source")
    relations: int = Field(..., description="distinct relations with evidence in this source")
    mentions: int
    runs: list[RunOut] = Field(..., description="the newest 200 runs behind this source")
    runs_total: int
    started_at: datetime | None
    updated_at: datetime | None


class ExtractIn(Schema):
    force: bool = Field(False, description="ignore the cache and extract every window again")


class ExtractQueued(Schema):
    source_id: int
    queued: bool


class UsageOut(Schema):
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float


class EntityOut(Schema):
    id: int
    name: str
    type: str
    description: str
    aliases: list[str]
    mention_count: int
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
