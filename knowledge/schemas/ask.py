"""Schemas of `POST /workspaces/{slug}/ask` (knowledge/api/ask.py), every field listed. The
JSON itself is rendered once, by knowledge/answering/payload.py, for the API, the stream's
`done` event and `manage.py ask --json`; these schemas validate and document it."""

from __future__ import annotations

from typing import Annotated, Literal

from ninja import Field, Schema

from knowledge.answering.prompt import QUESTION_CHARS
from knowledge.graph.base import MAX_HOPS
from knowledge.retrieval.limits import MAX_FILTER_ITEMS
from knowledge.schemas.search import IngestedFrom, IngestedTo, PublishedFrom, PublishedTo, Recency
from workspaces.models import MAX_ID


class AskIn(Schema):
    question: str = Field(..., min_length=1, max_length=QUESTION_CHARS)
    mode: Literal["local", "global"] = Field(
        "local", description="local: from passages; global: from community summaries too"
    )
    sources: list[Annotated[int, Field(ge=1, le=MAX_ID)]] | None = Field(
        None, max_length=MAX_FILTER_ITEMS, description="only chunks of these sources"
    )
    entity_types: list[Annotated[str, Field(max_length=200)]] | None = Field(
        None, max_length=MAX_FILTER_ITEMS
    )
    limit: int = Field(8, ge=1, le=20, description="passages retrieved")
    hops: int | None = Field(None, ge=0, le=MAX_HOPS)
    ingested_from: IngestedFrom = None
    ingested_to: IngestedTo = None
    published_from: PublishedFrom = None
    published_to: PublishedTo = None
    recency: Recency = None


class AskCitationOut(Schema):
    n: int
    chunk_id: int
    document_id: int
    document_title: str
    source_id: int
    char_start: int
    char_end: int


class AskPassageBlockOut(Schema):
    """A piece of the passage as the Ask page shows it: code, or prose without the
    parsers' Markdown marks."""

    code: bool
    text: str


class AskPassageOut(Schema):
    n: int
    chunk_id: int
    document_id: int
    document_title: str
    source_id: int
    url: str | None
    path: str
    char_start: int
    char_end: int
    text: str
    score: float
    blocks: list[AskPassageBlockOut]
    published_at: str | None = Field(
        None, description="its document's own date (ISO 8601), when it has one"
    )


class AskEntityOut(Schema):
    id: int
    name: str
    type: str


class AskRelationOut(Schema):
    id: int
    source_id: int
    target_id: int
    type: str


class AskUsageOut(Schema):
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


class AskOut(Schema):
    question: str
    mode: str
    llm_configured: bool
    answered: bool
    answer: str | None = Field(
        description="Markdown; [n] markers refer to passages[n-1]; null without an LLM"
    )
    answer_html: str | None = Field(
        description="the answer rendered from its Markdown and cleaned by a strict "
        "allow-list; each valid [n] a link to #passage-n; null without an LLM"
    )
    citations: list[AskCitationOut]
    passages: list[AskPassageOut]
    entities: list[AskEntityOut]
    relations: list[AskRelationOut]
    usage: AskUsageOut | None
    warnings: list[str]


class AskErrorOut(Schema):
    detail: str
