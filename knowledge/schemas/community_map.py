"""The community map's answers (knowledge/api/community_map.py): one level of the map, and
one community's entities with the edges leaving it."""

from __future__ import annotations

from datetime import datetime

from ninja import Field, Schema

from knowledge.schemas.graph import BulkGraphOut


class CommunityMemberOut(Schema):
    id: int
    name: str
    type: str


class CommunityOut(Schema):
    key: str = Field(..., description='"3" (a community) or "3.2" (sub-community 2 of 3)')
    size: int = Field(..., description="active entities when the map was computed")
    label: str = Field(..., description="its three best-connected members' names")
    title: str | None = Field(..., description="the LLM summary's title, when one exists")
    top: list[CommunityMemberOut] = Field(..., description="its five best-connected members")
    has_children: bool = Field(..., description="split into sub-communities (…/map?parent=key)")


class CommunityLinkOut(Schema):
    source: str
    target: str
    count: int = Field(..., description="active relations between the two, both directions")
    weight: float = Field(..., description="their summed weight")


class CommunityOthersOut(Schema):
    communities: int
    entities: int


class CommunityMapOut(Schema):
    parent: str | None = Field(..., description="the community whose sub-communities these are")
    entities: int = Field(..., description="active entities at this level")
    communities: list[CommunityOut] = Field(..., description="largest first")
    links: list[CommunityLinkOut] = Field(
        ..., description="the strongest among the communities listed, 8 per community at most"
    )
    links_total: int = Field(..., description="links among the communities listed, in all")
    others: CommunityOthersOut = Field(
        ..., description="not listed: beyond EXPLORER_MAP_MAX, and lone entities without relations"
    )
    computed_at: datetime | None
    stale: bool = Field(..., description="the graph changed since; a recomputation is queued")
    computing: bool = Field(..., description="a computation is queued or running")


class CommunityStubOut(Schema):
    node: int = Field(..., description="a member shown")
    community: str = Field(..., description="the neighbouring community's key")
    count: int = Field(..., description="active relations from the member into it")


class CommunityNeighbourOut(Schema):
    key: str
    label: str
    size: int


class CommunityGraphOut(BulkGraphOut):
    community: str
    stubs: list[CommunityStubOut] = Field(..., description="edges leaving the members shown")
    neighbours: list[CommunityNeighbourOut] = Field(..., description="most edges first")
