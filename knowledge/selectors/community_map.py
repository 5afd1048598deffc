"""Reads of the community map: one level of it (the top-level communities, or the
sub-communities of one), one community's entities with the edges leaving it, and whether
the stored map still describes the graph.

The map is stored by `do_compute_communities` (knowledge/models/communities.py), so a level
is a few hundred rows whatever the size of the workspace; only a drill-down reads entities
and relations, those of one community.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Q, Sum
from django_tasks_db.models import DBTaskResult

from knowledge.graph import get_graph_backend
from knowledge.models import Community, CommunityLink, CommunityRun, CommunitySummary, Entity
from knowledge.selectors.graph import graph_out
from workspaces.errors import DomainError
from workspaces.models import Workspace

# The task that computes the map (knowledge/tasks.py; named by path, selectors import no
# tasks). "Computing" means one for the workspace is queued or running.
COMPUTE_TASK = "knowledge.tasks.compute_communities"
PENDING = ("READY", "RUNNING")
# "3" (a community) or "3.2" (sub-community 2 of community 3).
KEY = re.compile(r"([0-9]{1,9})(?:\.([0-9]{1,9}))?")
DEFAULT_DRILL = 5000
# Links one level lists per community listed, the strongest (most relations) first: weak
# links between every two communities add up to tens of thousands at 200,000 entities and
# say little on a map; `links_total` counts them all.
LINKS_PER_COMMUNITY = 8

_GRAPH_SIZE = """
SELECT e.n, e.last, r.n, r.last FROM
    (SELECT count(*) AS n, coalesce(max(id), 0) AS last FROM knowledge_entity
     WHERE workspace_id = %(ws)s AND state = 'active') AS e,
    (SELECT count(*) AS n, coalesce(max(id), 0) AS last FROM knowledge_relation
     WHERE workspace_id = %(ws)s AND state = 'active') AS r
"""

# The edges from `ids` (members of one community) to active entities of other communities,
# per member and neighbouring key: the top-level community of the other end when it lies in
# another community, its sub-community when it lies in a sibling one.
_STUBS = """
SELECT e.member, o.community, CASE WHEN o.community = %(community)s THEN o.subcommunity END,
       count(*)
FROM (
    SELECT r.source_id AS member, r.target_id AS other FROM knowledge_relation AS r
    WHERE r.workspace_id = %(ws)s AND r.state = 'active' AND r.source_id = ANY(%(ids)s::bigint[])
    UNION ALL
    SELECT r.target_id, r.source_id FROM knowledge_relation AS r
    WHERE r.workspace_id = %(ws)s AND r.state = 'active' AND r.target_id = ANY(%(ids)s::bigint[])
) AS e
JOIN knowledge_entity AS o ON o.id = e.other
WHERE o.workspace_id = %(ws)s AND o.state = 'active' AND o.community IS NOT NULL
  AND (o.community <> %(community)s
       OR (%(sub)s::int IS NOT NULL AND o.subcommunity IS DISTINCT FROM %(sub)s::int))
GROUP BY 1, 2, 3
ORDER BY 1, 4 DESC, 2, 3
"""


class BadKey(DomainError):
    """A community key that is not "N" or "N.M" (400)."""

    code = "bad_key"


@dataclass(frozen=True, slots=True)
class GraphSize:
    entities: int
    relations: int
    last_entity: int
    last_relation: int


@dataclass(frozen=True, slots=True)
class Key:
    community: int
    sub: int | None = None

    def __str__(self) -> str:
        return str(self.community) if self.sub is None else f"{self.community}.{self.sub}"


def parse_key(text: str) -> Key:
    match = KEY.fullmatch(text)
    if match is None:
        raise BadKey(f"{text!r} is not a community key (N or N.M)")
    community, sub = match.groups()
    return Key(int(community), int(sub) if sub is not None else None)


def graph_size(workspace: Workspace) -> GraphSize:
    """Active entities and relations now, and the newest of each (two index scans)."""
    with connection.cursor() as cursor:
        cursor.execute(_GRAPH_SIZE, {"ws": workspace.pk})
        entities, last_entity, relations, last_relation = cursor.fetchone()
    return GraphSize(entities, relations, last_entity, last_relation)


def computation_pending(workspace: Workspace) -> bool:
    """Whether a computation of the workspace's communities is queued or running."""
    return DBTaskResult.objects.filter(
        task_path=COMPUTE_TASK, status__in=PENDING, args_kwargs__args__0=workspace.pk
    ).exists()


def map_is_stale(run: CommunityRun | None, workspace: Workspace) -> bool:
    """A map is stale when the active graph is not the one it was computed from (entities
    or relations added, merged or deleted since); none at all counts as stale."""
    if run is None:
        return True
    now = graph_size(workspace)
    return (now.entities, now.relations, now.last_entity, now.last_relation) != (
        run.entities,
        run.relations,
        run.last_entity,
        run.last_relation,
    )


def last_run(workspace: Workspace) -> CommunityRun | None:
    return CommunityRun.objects.for_workspace(workspace).first()


def community_exists(workspace: Workspace, key: Key) -> bool:
    """Whether `key` names a community (or sub-community) of the stored map; a community of
    one entity without relations has no row but is one all the same."""
    if (
        Community.objects.for_workspace(workspace)
        .filter(community=key.community, subcommunity=key.sub)
        .exists()
    ):
        return True
    return key.sub is None and _members(workspace, key).exists()


def get_map_level(
    workspace: Workspace, *, run: CommunityRun | None, parent: int | None
) -> dict[str, Any]:
    """One level of the map (the caller adds the staleness fields): the EXPLORER_MAP_MAX
    largest communities of the level, the links among them, and the rest counted as
    "others". At the top level the communities of one entity without relations are among
    the others (there can be tens of thousands); a sub-level lists every sub-community."""
    stored = Community.objects.for_workspace(workspace)
    level = (
        stored.filter(subcommunity__isnull=True)
        if parent is None
        else stored.filter(community=parent, subcommunity__isnull=False)
    )
    total = level.aggregate(n=Sum("size"))["n"] or 0
    listed = level.count()
    shown = list(level.order_by("-size", "community", "subcommunity")[: settings.EXPLORER_MAP_MAX])
    hidden_communities = listed - len(shown)
    hidden_entities = total - sum(c.size for c in shown)
    if parent is None and run is not None:
        # The singletons have no row: the run counted every community.
        singletons = max(run.communities - listed, 0)
        hidden_communities += singletons
        hidden_entities += singletons
        total += singletons
    return {
        "parent": None if parent is None else str(parent),
        "entities": total,
        "communities": _communities_out(workspace, shown, parent),
        **_links_out(workspace, shown, parent),
        "others": {"communities": hidden_communities, "entities": hidden_entities},
    }


def _number(community: Community, parent: int | None) -> int:
    return community.community if parent is None else community.subcommunity or 0


def _key(community: Community) -> str:
    return str(Key(community.community, community.subcommunity))


def _communities_out(
    workspace: Workspace, shown: list[Community], parent: int | None
) -> list[dict[str, Any]]:
    titles: dict[int, str] = {}
    if parent is None and shown:
        titles = dict(
            CommunitySummary.objects.for_workspace(workspace)
            .filter(community__in=[c.community for c in shown])
            .values_list("community", "title")
        )
    return [
        {
            "key": _key(c),
            "size": c.size,
            "label": c.label,
            "title": titles.get(c.community) or None if parent is None else None,
            "top": [{"id": m["id"], "name": m["name"], "type": m["type"]} for m in c.top],
            "has_children": c.children > 0,
        }
        for c in shown
    ]


def _links_out(workspace: Workspace, shown: list[Community], parent: int | None) -> dict[str, Any]:
    """`links`: the strongest links among the communities shown, LINKS_PER_COMMUNITY per
    community shown at most; `links_total`: how many there are."""
    numbers = {_number(c, parent): _key(c) for c in shown}
    among = CommunityLink.objects.for_workspace(workspace).filter(
        community=parent, source__in=numbers, target__in=numbers
    )
    strongest = among.order_by("-count", "-weight", "source", "target")[
        : LINKS_PER_COMMUNITY * len(shown)
    ]
    links = [
        {
            "source": numbers[link.source],
            "target": numbers[link.target],
            "count": link.count,
            "weight": round(link.weight, 3),
        }
        for link in strongest
    ]
    total = len(links) if len(links) < LINKS_PER_COMMUNITY * len(shown) else among.count()
    return {"links": links, "links_total": total}


# --- one community's entities ---------------------------------------------------------------


def _members(workspace: Workspace, key: Key) -> Any:
    members = Entity.objects.for_workspace(workspace).filter(
        state="active", community=key.community
    )
    return members.filter(subcommunity=key.sub) if key.sub is not None else members


def get_community_graph(workspace: Workspace, key: Key, *, limit: int) -> dict[str, Any]:
    """The bulk graph payload of one community: its `limit` best-connected members (degree,
    mentions, id) and the edges among them, `count` its size; plus the edges leaving the
    members shown as stubs (per member and neighbouring community) and those neighbours."""
    members = _members(workspace, key)
    chosen = list(
        members.order_by("-degree", "-mention_count", "pk").values_list("pk", flat=True)[:limit]
    )
    backend = get_graph_backend()
    result = backend.subgraph(workspace_id=workspace.pk, ids=chosen) if chosen else None
    payload = graph_out(result) if result is not None else {"nodes": [], "edges": []}
    for node in payload["nodes"]:
        node.pop("depth", None)
    payload["count"] = members.count() if len(chosen) >= limit else len(chosen)
    payload["truncated"] = payload["count"] > len(payload["nodes"])
    stubs = _stubs(workspace, key, chosen)
    payload["community"] = str(key)
    payload["stubs"] = stubs
    payload["neighbours"] = _neighbours(workspace, stubs)
    return payload


def _stubs(workspace: Workspace, key: Key, ids: list[int]) -> list[dict[str, Any]]:
    if not ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            _STUBS, {"ws": workspace.pk, "ids": ids, "community": key.community, "sub": key.sub}
        )
        rows = cursor.fetchall()
    return [
        {"node": node, "community": str(Key(community, sub)), "count": count}
        for node, community, sub, count in rows
    ]


def _neighbours(workspace: Workspace, stubs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The communities the stubs lead to, most edges first, with their label and size."""
    edges: dict[str, int] = {}
    for stub in stubs:
        edges[stub["community"]] = edges.get(stub["community"], 0) + stub["count"]
    if not edges:
        return []
    keys = [parse_key(k) for k in edges]
    wanted = Q()
    for k in keys:
        wanted |= Q(community=k.community, subcommunity=k.sub)
    rows = {_key(c): c for c in Community.objects.for_workspace(workspace).filter(wanted)}
    ordered = sorted(edges, key=lambda k: (-edges[k], k))
    return [
        {
            "key": k,
            "label": rows[k].label if k in rows else "",
            "size": rows[k].size if k in rows else 1,
        }
        for k in ordered
    ]
