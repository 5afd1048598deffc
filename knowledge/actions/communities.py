"""Storing a workspace's communities (detected by knowledge/graph/communities.py) on its
entities, with the community map read from them, in one transaction, and telling the graph
projections which ones changed; queueing that computation when the map asks for it; and
the LLM's summaries of them, which global answers map over."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from decimal import Decimal
from itertools import batched
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from knowledge.actions.llm_calls import do_record_llm_call
from knowledge.answering.prompt import split_summary, summary_messages
from knowledge.graph.communities import Detected, detect_communities
from knowledge.graph.sync import schedule_graph_sync
from knowledge.models import (
    Community,
    CommunityLink,
    CommunityRun,
    CommunitySummary,
    Entity,
    EntityState,
    Relation,
)
from knowledge.selectors.community_map import (
    BadKey,
    GraphSize,
    community_exists,
    computation_pending,
    get_map_level,
    graph_size,
    last_run,
    map_is_stale,
    parse_key,
)
from system.llm.client import LlmClient
from workspaces.errors import NotFound
from workspaces.models import Workspace

UPDATE_BATCH = 5000
# The task a stale or missing map asks for (resolved by path: actions import no tasks).
COMPUTE_TASK = "knowledge.tasks.compute_communities"


@dataclass(frozen=True, slots=True)
class CommunityReport:
    entities: int
    relations: int
    communities: int
    # Size of the largest community, and how many entities have no relation at all (each a
    # community of one).
    largest: int
    isolated: int
    modularity: float
    # Entities whose community (or sub-community) number changed (those written).
    changed: int
    seconds: float
    # Communities larger than COMMUNITY_SPLIT_ABOVE split into sub-communities, and how
    # many sub-communities they gave.
    split: int = 0
    subcommunities: int = 0


def _store(workspace: Workspace, found: Detected) -> list[int]:
    """Write the numbers (only rows whose numbers change) and clear the numbers of entities
    no longer active; returns the ids written."""
    changed: list[int] = []
    subs = found.subassignment
    with connection.cursor() as cursor:
        for batch in batched(sorted(found.assignment.items()), UPDATE_BATCH):
            cursor.execute(
                """
                UPDATE knowledge_entity AS e
                SET community = v.community, subcommunity = v.subcommunity
                FROM unnest(%s::bigint[], %s::int[], %s::int[]) AS v(id, community, subcommunity)
                WHERE e.id = v.id AND e.workspace_id = %s
                  AND (e.community IS DISTINCT FROM v.community
                       OR e.subcommunity IS DISTINCT FROM v.subcommunity)
                RETURNING e.id
                """,
                [
                    [pk for pk, _ in batch],
                    [n for _, n in batch],
                    [subs.get(pk) for pk, _ in batch],
                    workspace.pk,
                ],
            )
            changed.extend(row[0] for row in cursor.fetchall())
        cursor.execute(
            """
            UPDATE knowledge_entity SET community = NULL, subcommunity = NULL
            WHERE workspace_id = %s AND state <> 'active'
              AND (community IS NOT NULL OR subcommunity IS NOT NULL)
            RETURNING id
            """,
            [workspace.pk],
        )
        changed.extend(row[0] for row in cursor.fetchall())
    return changed


# Renumbered entities after which the planner's statistics of the entity table are renewed
# at once: a first computation of 200,000 entities left them describing a table without
# community numbers, and the first drill-down then took 15 s instead of 0.15 s (a
# nested-loop plan for what is now a large community), until autovacuum came by.
ANALYZE_AFTER = 10_000


def _analyze_entities() -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE knowledge_entity")


def do_compute_communities(*, workspace: Workspace) -> CommunityReport:
    """Detect the communities of the workspace's active graph (those larger than
    COMMUNITY_SPLIT_ABOVE split into sub-communities) and store each entity's numbers on
    `Entity.community` and `Entity.subcommunity`, with the community map read from them
    (one transaction: readers see the old numbering and map or the new ones, never a mix);
    projections get the entities whose numbers changed."""
    started = time.perf_counter()
    split_above = settings.COMMUNITY_SPLIT_ABOVE
    # The graph's size before it is read: a change while Louvain runs leaves the map stale.
    size = graph_size(workspace)
    found = detect_communities(workspace, split_above=split_above)
    with transaction.atomic():
        changed = _store(workspace, found)
        _store_map(workspace, found=found, size=size, split_above=split_above, started=started)
        schedule_graph_sync(workspace_id=workspace.pk, entity_ids=changed, relation_ids=[])
    if len(changed) >= ANALYZE_AFTER:
        _analyze_entities()
    split = {found.assignment[pk] for pk in found.subassignment}
    return CommunityReport(
        entities=found.entities,
        relations=found.relations,
        communities=len(found.sizes),
        largest=max(found.sizes, default=0),
        isolated=found.isolated,
        modularity=found.modularity,
        changed=len(changed),
        seconds=round(time.perf_counter() - started, 3),
        split=len(split),
        subcommunities=len({(found.assignment[pk], n) for pk, n in found.subassignment.items()}),
    )


# --- the community map (read by knowledge/selectors/community_map.py) ---------------------

# Every community and sub-community with its size, its five best-connected members (degree,
# mentions, id) and the first three's names as its label; one pass over the workspace's
# entities. A community of one entity without relations gets no row (the map counts those
# among "others"; there can be tens of thousands).
_MAP_COMMUNITIES = """
WITH member AS (
    SELECT e.id, e.name, et.name AS type, e.community, e.subcommunity, e.degree,
           row_number() OVER (
               PARTITION BY e.community ORDER BY e.degree DESC, e.mention_count DESC, e.id
           ) AS rank,
           CASE WHEN e.subcommunity IS NOT NULL THEN row_number() OVER (
               PARTITION BY e.community, e.subcommunity
               ORDER BY e.degree DESC, e.mention_count DESC, e.id
           ) END AS subrank
    FROM knowledge_entity AS e
    JOIN knowledge_entitytype AS et ON et.id = e.type_id
    WHERE e.workspace_id = %(ws)s AND e.state = 'active' AND e.community IS NOT NULL
)
INSERT INTO knowledge_community
    (workspace_id, community, subcommunity, size, label, top, children)
SELECT %(ws)s, community, NULL, count(*),
       string_agg(name, ' · ' ORDER BY rank) FILTER (WHERE rank <= 3),
       jsonb_agg(jsonb_build_object('id', id, 'name', name, 'type', type) ORDER BY rank)
           FILTER (WHERE rank <= 5),
       count(DISTINCT subcommunity)
FROM member
GROUP BY community
HAVING count(*) > 1 OR max(degree) > 0
UNION ALL
SELECT %(ws)s, community, subcommunity, count(*),
       string_agg(name, ' · ' ORDER BY subrank) FILTER (WHERE subrank <= 3),
       jsonb_agg(jsonb_build_object('id', id, 'name', name, 'type', type) ORDER BY subrank)
           FILTER (WHERE subrank <= 5),
       0
FROM member
WHERE subcommunity IS NOT NULL
GROUP BY community, subcommunity
"""

# The relations between communities, one pass over the workspace's active relations: ends
# in two top-level communities count for that pair (`community` null); ends in two
# sub-communities of one community count for that pair inside it. Both directions summed,
# source < target; relations inside one (sub-)community count for none.
_MAP_LINKS = """
INSERT INTO knowledge_communitylink (workspace_id, community, source, target, count, weight)
SELECT %(ws)s, parent, least(a, b), greatest(a, b), count(*), sum(weight)
FROM (
    SELECT r.weight,
           CASE WHEN s.community = t.community THEN s.community END AS parent,
           CASE WHEN s.community = t.community THEN s.subcommunity ELSE s.community END AS a,
           CASE WHEN s.community = t.community THEN t.subcommunity ELSE t.community END AS b
    FROM knowledge_relation AS r
    JOIN knowledge_entity AS s ON s.id = r.source_id
    JOIN knowledge_entity AS t ON t.id = r.target_id
    WHERE r.workspace_id = %(ws)s AND r.state = 'active'
      AND s.state = 'active' AND t.state = 'active'
      AND (s.community <> t.community OR s.subcommunity <> t.subcommunity)
) AS crossing
GROUP BY parent, least(a, b), greatest(a, b)
"""


def _store_map(
    workspace: Workspace, *, found: Detected, size: GraphSize, split_above: int, started: float
) -> None:
    """Replace the workspace's map with one read from the numbers just stored (inside the
    caller's transaction), and record the run with the size of the graph it was computed
    from (the figures the staleness check compares with)."""
    Community.objects.for_workspace(workspace).delete()
    CommunityLink.objects.for_workspace(workspace).delete()
    with connection.cursor() as cursor:
        cursor.execute(_MAP_COMMUNITIES, {"ws": workspace.pk})
        cursor.execute(_MAP_LINKS, {"ws": workspace.pk})
    CommunityRun.objects.update_or_create(
        workspace=workspace,
        defaults={
            "computed_at": timezone.now(),
            "entities": size.entities,
            "relations": size.relations,
            "last_entity": size.last_entity,
            "last_relation": size.last_relation,
            "communities": len(found.sizes),
            "split_above": split_above,
            "seconds": round(time.perf_counter() - started, 3),
        },
    )


def do_request_communities(*, workspace: Workspace) -> bool:
    """Queue the computation of the workspace's communities unless one is already queued or
    running (checked and queued under a lock per workspace, so requests arriving together
    queue one). True when one was queued now. The task row is written in this transaction,
    so the worker sees it at commit."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                [f"knowledge.communities:{workspace.pk}"],
            )
        if computation_pending(workspace):
            return False
        import_string(COMPUTE_TASK).enqueue(workspace.pk)
    return True


def do_read_community_map(*, workspace: Workspace, parent: str | None = None) -> dict[str, Any]:
    """One level of the community map (the top level, or the sub-communities of `parent`)
    with `computed_at`, `stale` and `computing`; a missing or stale map is still answered
    (empty, or as stored) and its computation queued once. BadKey: `parent` is not a
    community number; NotFound: the stored map has no such community."""
    parent_number = None
    if parent is not None:
        key = parse_key(parent)
        if key.sub is not None:
            raise BadKey("parent: sub-communities have no sub-communities")
        if not community_exists(workspace, key):
            raise NotFound(f"No community {key} in this workspace.")
        parent_number = key.community
    run = last_run(workspace)
    stale = map_is_stale(run, workspace)
    if stale:
        do_request_communities(workspace=workspace)
    data = get_map_level(workspace, run=run, parent=parent_number)
    data["computed_at"] = run.computed_at if run is not None else None
    data["stale"] = stale and run is not None
    data["computing"] = stale or computation_pending(workspace)
    return data


# --- community summaries, for global answers (knowledge/actions/ask.py) -----------------

SUMMARY_ENTITIES = 15
SUMMARY_RELATIONS = 20


@dataclass(frozen=True, slots=True)
class SummaryRefresh:
    written: int
    kept: int
    removed: int
    prompt_tokens: int
    completion_tokens: int
    cost: Decimal


def _memberships(workspace: Workspace) -> dict[int, list[int]]:
    members: dict[int, list[int]] = {}
    rows = (
        Entity.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE, community__isnull=False)
        .order_by("community", "pk")
        .values_list("community", "pk")
    )
    for community, pk in rows:
        if community is not None:
            members.setdefault(community, []).append(pk)
    return members


def member_hash(member_ids: list[int]) -> str:
    return hashlib.sha256(",".join(map(str, sorted(member_ids))).encode()).hexdigest()


def _summary_input(workspace: Workspace, member_ids: list[int]) -> tuple[list[str], list[str]]:
    """The community's best-connected entities (name, type, description) and the relations
    among them, as lines for the summary prompt."""
    entities = list(
        Entity.objects.for_workspace(workspace)
        .filter(pk__in=member_ids)
        .select_related("type")
        .order_by("-degree", "-mention_count", "pk")[:SUMMARY_ENTITIES]
    )
    names = {e.pk: e.name for e in entities}
    lines = [
        f"{e.name} ({e.type.name})" + (f": {e.description[:300]}" if e.description else "")
        for e in entities
    ]
    relations = (
        Relation.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE, source_id__in=names, target_id__in=names)
        .select_related("type")
        .order_by("-weight", "pk")[:SUMMARY_RELATIONS]
    )
    relation_lines = [
        f"{names[r.source_id]} {r.type.name.replace('_', ' ')} {names[r.target_id]}"
        for r in relations
    ]
    return lines, relation_lines


def do_refresh_community_summaries(
    *, workspace: Workspace, client: LlmClient, limit: int
) -> SummaryRefresh:
    """Summaries for the workspace's `limit` largest communities, written by the LLM for
    those whose members changed since their summary (or that have none); summaries of
    communities gone are removed. Communities are detected first when none are stored.
    Each LLM call is recorded (`LlmCall`, purpose "summary") and counts against the
    workspace's answer budget. The LLM is called outside any transaction; each summary is
    written in its own."""
    if not Entity.objects.for_workspace(workspace).filter(community__isnull=False).exists():
        do_compute_communities(workspace=workspace)
    members = _memberships(workspace)
    largest = sorted(members, key=lambda c: (-len(members[c]), c))[:limit]
    existing = {s.community: s for s in CommunitySummary.objects.for_workspace(workspace)}
    removed, _ = (
        CommunitySummary.objects.for_workspace(workspace).exclude(community__in=largest).delete()
    )
    written = kept = prompt_tokens = completion_tokens = 0
    cost = Decimal(0)
    for community in largest:
        digest = member_hash(members[community])
        current = existing.get(community)
        if current is not None and current.member_hash == digest:
            kept += 1
            continue
        entity_lines, relation_lines = _summary_input(workspace, members[community])
        reply = client.chat(summary_messages(entity_lines, relation_lines), max_tokens=400)
        title, summary = split_summary(reply.content)
        with transaction.atomic():
            call_cost = do_record_llm_call(
                workspace_id=workspace.pk,
                purpose="summary",
                model=reply.model,
                prompt_tokens=reply.usage.prompt_tokens,
                completion_tokens=reply.usage.completion_tokens,
                usage_estimated=reply.usage.estimated,
                duration_ms=reply.duration_ms,
                attempts=reply.attempts,
            ).cost
            CommunitySummary.objects.update_or_create(
                workspace=workspace,
                community=community,
                defaults={
                    "title": title,
                    "summary": summary,
                    "member_hash": digest,
                    "size": len(members[community]),
                    "model": reply.model,
                    "prompt_tokens": reply.usage.prompt_tokens,
                    "completion_tokens": reply.usage.completion_tokens,
                    "cost": call_cost,
                },
            )
        written += 1
        prompt_tokens += reply.usage.prompt_tokens
        completion_tokens += reply.usage.completion_tokens
        cost += call_cost
    return SummaryRefresh(written, kept, removed, prompt_tokens, completion_tokens, cost)
