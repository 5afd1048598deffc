"""API schemas of the ingest app; every field listed explicitly."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Field, Schema


class TextSourceIn(Schema):
    kind: str = Field("text", description="'text' for pasted text (files: multipart upload)")
    title: str = Field("", max_length=300)
    text: str = Field(..., description="The text itself (Markdown welcome)")
    name: str = Field("", max_length=300, description="Source name; defaults to the title")
    tags: list[str] = Field(default_factory=list)


class FailedDocument(Schema):
    id: int
    path: str
    error: str


class SourceOut(Schema):
    id: int
    kind: str
    name: str
    origin: str
    tags: list[str]
    status: str = Field(..., description="queued | running | done | failed | cancelled | deleting")
    stage: str
    counters: dict[str, int] = Field(
        ..., description="documents, done, failed, cancelled, pending, chunks, embedded"
    )
    error: str
    warning: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class SourceDetailOut(SourceOut):
    failed: list[FailedDocument]


class SourceCreated(SourceOut):
    documents: list[int] = Field(..., description="ids of the documents added")
    unchanged: list[int] = Field(..., description="ids of documents whose content was identical")


class DocumentOut(Schema):
    id: int
    source_id: int
    path: str
    title: str
    mime: str
    format: str
    size: int
    content_hash: str
    status: str
    error: str
    warnings: list[str]
    metadata: dict[str, Any]
    chunk_count: int
    created_at: datetime
    updated_at: datetime


class ChunkOut(Schema):
    id: int
    ordinal: int
    text: str
    char_start: int
    char_end: int
    token_count: int
    heading_path: list[str]
    content_hash: str
    embedding_model: str
    embedded: bool

    @staticmethod
    def resolve_embedded(obj: Any) -> bool:
        return bool(obj.embedding_model)


class ActionResult(Schema):
    source: SourceOut
    queued: int = Field(..., description="documents queued by this action")
