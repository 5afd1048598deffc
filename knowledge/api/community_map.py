"""The community map (the explorer's way into a large workspace): one level of it, and one
community's entities with the edges leaving it. Viewers may read both. A map that is
missing or stale is still answered (empty, or as stored) and its computation queued once:
the answer says so (`stale`, `computing`) and the explorer asks again later.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from django.http import HttpRequest, HttpResponse, JsonResponse
from ninja import Query, Router

from knowledge.actions.communities import do_read_community_map
from knowledge.schemas.community_map import CommunityGraphOut, CommunityMapOut
from knowledge.schemas.graph import BULK_FORMAT
from knowledge.selectors.bulk_graph import MAX_BULK_NODES, graph_columns
from knowledge.selectors.community_map import (
    DEFAULT_DRILL,
    community_exists,
    get_community_graph,
    parse_key,
)
from system.metrics import observe_graph_query
from workspaces.auth import get_workspace_access
from workspaces.errors import NotFound

router = Router(tags=["knowledge"])


@router.get(
    "/workspaces/{slug}/communities/map",
    response=CommunityMapOut,
    summary="The community map: communities, or one community's sub-communities",
)
def community_map(
    request: HttpRequest,
    slug: str,
    parent: Annotated[
        str | None, Query(max_length=12, description="a community key: its sub-communities")
    ] = None,
) -> dict[str, Any]:
    """The EXPLORER_MAP_MAX largest communities of the level with the links among them;
    the rest counted in `others`. Never computed: no communities, `computing` true. Stale
    (the graph changed since): served as stored, `stale` true. Either queues one
    computation. 404 for an unknown parent, 400 for one that is not a community number."""
    workspace = get_workspace_access(request, slug).workspace
    started = time.perf_counter()
    data = do_read_community_map(workspace=workspace, parent=parent)
    observe_graph_query("community_map", time.perf_counter() - started)
    return data


@router.get(
    "/workspaces/{slug}/communities/{key}/graph",
    response=CommunityGraphOut,
    summary="One community's best-connected entities, with stubs to its neighbours",
)
def community_graph(
    request: HttpRequest,
    slug: str,
    key: str,
    limit: Annotated[int, Query(ge=1, le=MAX_BULK_NODES)] = DEFAULT_DRILL,
    format: Annotated[Literal["objects", "columns"], Query(description=BULK_FORMAT)] = "objects",
) -> HttpResponse:
    """The bulk graph payload (as GET …/graph) of the community's `limit` best-connected
    members (`count`: its size), plus `stubs`, the edges from those members into other
    communities (per member and community: a sibling sub-community's key inside a split
    community, else the top-level one), and `neighbours`, those communities. 404 for a key
    the stored map does not have, 400 for one that is not "N" or "N.M"."""
    workspace = get_workspace_access(request, slug).workspace
    community = parse_key(key)
    if not community_exists(workspace, community):
        raise NotFound(f"No community {community} in this workspace.")
    started = time.perf_counter()
    data = get_community_graph(workspace, community, limit=limit)
    observe_graph_query("community_graph", time.perf_counter() - started)
    if format == "columns":
        extra = {k: data[k] for k in ("community", "stubs", "neighbours")}
        data = graph_columns(data) | extra
    # Compact separators, as the bulk loads: the payload is the selector's own.
    return JsonResponse(data, json_dumps_params={"separators": (",", ":")})
