"""`get_entity` and `list_entities`: the entity reads of `GET …/entities/{id}` and
`GET …/entities`, through the same selectors and response schemas."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from agents.access import Access
from agents.results import ToolAnswer
from agents.tools.base import Arguments, ToolSpec, paged
from agents.tools.search import DATA_NOTE
from knowledge.api.params import utc
from knowledge.schemas.graph import EntityDetailOut, EntityListOut
from knowledge.selectors.entities import MAX_EVIDENCE, get_entity_detail, search_entities
from workspaces.models import MAX_ID

EntityId = Field(..., ge=1, le=MAX_ID, description="An entity id (from search or list_entities).")
MAX_LIST = 100


class GetEntityArguments(Arguments):
    entity_id: int = EntityId
    evidence_limit: int = Field(
        5, ge=0, le=MAX_EVIDENCE, description="Newest mentions returned with their snippets."
    )


def run_get_entity(access: Access, args: GetEntityArguments) -> ToolAnswer:
    detail = get_entity_detail(access.workspace, args.entity_id, evidence_limit=args.evidence_limit)
    data = EntityDetailOut.model_validate(detail).model_dump(mode="json")
    return ToolAnswer(data={**data, "note": DATA_NOTE})


class ListEntitiesArguments(Arguments):
    q: str | None = Field(
        None, max_length=300, description="A name or alias to look for (words match their "
        "starts, one typo forgiven in words of 4+ characters).",
    )  # fmt: skip
    match: Literal["words", "prefix", "contains"] = Field(
        "words", description="words (default) | prefix: a name starting with q | contains."
    )
    type: str | None = Field(None, max_length=64, description="Entity type, e.g. person.")
    source: int | None = Field(None, ge=1, le=MAX_ID, description="Mentioned by this source.")
    seen_after: datetime | None = Field(None, description="Last seen at or after (ISO 8601).")
    seen_before: datetime | None = Field(None, description="First seen at or before.")
    min_degree: int | None = Field(None, ge=0, le=1_000_000_000, description="Fewest relations.")
    state: Literal["active", "merged", "deleted"] = "active"
    order: Literal["relevance", "name", "-degree", "-mention_count", "-last_seen_at"] = Field(
        "relevance", description="relevance (with q: best name match first; without: by "
        "name) | name | -degree (best connected first) | -mention_count | -last_seen_at.",
    )  # fmt: skip
    limit: int = Field(20, ge=1, le=MAX_LIST)
    offset: int = Field(0, ge=0, le=MAX_ID)


def run_list_entities(access: Access, args: ListEntitiesArguments) -> ToolAnswer:
    entities = search_entities(
        access.workspace,
        q=args.q,
        match=args.match,
        entity_type=args.type,
        source_id=args.source,
        seen_after=utc(args.seen_after, label="seen_after"),
        seen_before=utc(args.seen_before, label="seen_before"),
        min_degree=args.min_degree,
        state=args.state,
        order=args.order,
    )
    page = list(entities[args.offset : args.offset + args.limit])
    items = [EntityListOut.model_validate(e).model_dump(mode="json") for e in page]
    return ToolAnswer(
        data=paged(items, count=entities.count(), limit=args.limit, offset=args.offset)
    )


TOOLS = [
    ToolSpec(
        name="get_entity",
        title="Get an entity",
        description=(
            "One entity of the knowledge graph: name, type, description, aliases, mention "
            "and relation counts by type and direction, the sources mentioning it, and its "
            "newest evidence (each mention's document, character span and the text around "
            "it). A merged entity answers with `state` merged and `merged_into`, the id to "
            "follow."
        ),
        arguments=GetEntityArguments,
        run=run_get_entity,
    ),
    ToolSpec(
        name="list_entities",
        title="List or find entities",
        description=(
            "Entities of the workspace, filtered by name or alias (`q`), type, source, time "
            "seen, degree and state, a page at a time (`limit`, `offset`; `next_offset` is "
            "null on the last page). Use it to find an entity's id by name, or "
            "order=-degree for the best-connected ones."
        ),
        arguments=ListEntitiesArguments,
        run=run_list_entities,
    ),
]
