"""Schemas of the workspace archive endpoints (knowledge/api/archive.py)."""

from __future__ import annotations

from ninja import Field, Schema


class WorkspaceImported(Schema):
    slug: str
    name: str
    counts: dict[str, int] = Field(..., description="rows imported per table (app.Model)")
    blobs: int = Field(..., description="stored document files imported")
