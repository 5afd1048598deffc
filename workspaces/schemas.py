"""API schemas of the workspaces app; every field is listed explicitly."""

from __future__ import annotations

from datetime import datetime

from ninja import Field, Schema


class WorkspaceOut(Schema):
    slug: str
    name: str
    description: str
    created_at: datetime
    role: str | None = Field(None, description="The caller's role in this workspace")


class WorkspaceIn(Schema):
    slug: str = Field(..., max_length=64, description="letters, digits, hyphens, underscores")
    name: str = Field("", max_length=200)
    description: str = ""


class WorkspacePatch(Schema):
    name: str | None = Field(None, max_length=200)
    description: str | None = None


class MemberOut(Schema):
    username: str
    role: str
    created_at: datetime


class MemberIn(Schema):
    username: str
    role: str = Field("viewer", description="viewer | editor | admin")


class TokenOut(Schema):
    id: int
    name: str
    prefix: str
    username: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class TokenIn(Schema):
    name: str = Field(..., max_length=100)


class TokenCreated(TokenOut):
    token: str = Field(..., description="The secret, shown only in this response")


class MeOut(Schema):
    username: str
    email: str
    is_staff: bool
    token_workspace: str | None = Field(None, description="Set when calling with an API token")
    workspaces: list[WorkspaceOut]


class WorkspaceDeletionOut(Schema):
    slug: str
    name: str
    state: str = Field(..., description='"deleting" until the background task has removed it')
    deletion_requested_at: datetime | None
