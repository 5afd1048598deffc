"""Schemas of extraction: a source's runs, tokens, windows, estimate, and the workspace's usage."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Field, Schema


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
