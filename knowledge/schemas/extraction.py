"""Schemas of extraction: a source's runs, tokens, windows, estimate, and the workspace's usage."""

from __future__ import annotations

from datetime import date, datetime
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
    skipped_unknown: int = Field(
        0,
        description="windows of a known-only source not sent: they named no known entity or alias",
    )


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
    # Also `paused` since issue 41 (the workspace's monthly LLM budget is spent: documents
    # wait); the description stays as clients read it (docs/api.md lists every status).
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


class PausedSourceOut(Schema):
    id: int
    name: str


class LlmBudgetOut(Schema):
    llm_configured: bool = Field(..., description="an LLM is configured (else nothing is spent)")
    monthly_budget_usd: float | None = Field(
        ...,
        description="what the workspace's LLM calls may cost this calendar month (LLM_PRICE_* "
        "currency); null: no limit",
    )
    default_usd: float = Field(..., description="LLM_WORKSPACE_MONTHLY_BUDGET_USD (0: no limit)")
    override_usd: float | None = Field(
        ..., description="the workspace's own amount; null: the default applies"
    )
    spent_this_month_usd: float = Field(..., description="every purpose, since month_start")
    month_start: date
    remaining_usd: float | None
    spent_out: bool = Field(..., description="true: extraction pauses, documents wait")
    paused_sources: list[PausedSourceOut] = Field(
        ..., description="sources whose extraction waits for the budget"
    )


class LlmBudgetIn(Schema):
    monthly_budget_usd: float | None = Field(
        ...,
        ge=0,
        le=9_999_999_999.99,
        description="the workspace's own monthly LLM budget; 0: no limit; null: the server's "
        "default (LLM_WORKSPACE_MONTHLY_BUDGET_USD). Raising it resumes paused extraction.",
    )
