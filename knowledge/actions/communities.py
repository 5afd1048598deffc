"""Storing a workspace's communities (detected by knowledge/graph/communities.py) on its
entities, in one transaction, and telling the graph projections which ones changed; and
the LLM's summaries of them, which global answers map over."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from decimal import Decimal
from itertools import batched

from django.db import connection, transaction

from knowledge.answering.prompt import split_summary, summary_messages
from knowledge.extraction.cost import llm_cost
from knowledge.extraction.llm import LlmClient
from knowledge.graph.communities import detect_communities
from knowledge.graph.sync import schedule_graph_sync
from knowledge.models import CommunitySummary, Entity, EntityState, LlmCall, Relation
from workspaces.models import Workspace

UPDATE_BATCH = 5000


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
    # Entities whose community number changed (those written).
    changed: int
    seconds: float


def _store(workspace: Workspace, assignment: dict[int, int]) -> list[int]:
    """Write the numbers (only rows whose number changes) and clear the number of entities
    no longer active; returns the ids written."""
    changed: list[int] = []
    with connection.cursor() as cursor:
        for batch in batched(sorted(assignment.items()), UPDATE_BATCH):
            cursor.execute(
                """
                UPDATE knowledge_entity AS e SET community = v.community
                FROM unnest(%s::bigint[], %s::int[]) AS v(id, community)
                WHERE e.id = v.id AND e.workspace_id = %s
                  AND e.community IS DISTINCT FROM v.community
                RETURNING e.id
                """,
                [[pk for pk, _ in batch], [n for _, n in batch], workspace.pk],
            )
            changed.extend(row[0] for row in cursor.fetchall())
        cursor.execute(
            """
            UPDATE knowledge_entity SET community = NULL
            WHERE workspace_id = %s AND state <> 'active' AND community IS NOT NULL
            RETURNING id
            """,
            [workspace.pk],
        )
        changed.extend(row[0] for row in cursor.fetchall())
    return changed


def do_compute_communities(*, workspace: Workspace) -> CommunityReport:
    """Detect the communities of the workspace's active graph and store each entity's
    number on `Entity.community` (one transaction: readers see the old numbering or the
    new one, never a mix); projections get the entities whose number changed."""
    started = time.perf_counter()
    found = detect_communities(workspace)
    with transaction.atomic():
        changed = _store(workspace, found.assignment)
        schedule_graph_sync(workspace_id=workspace.pk, entity_ids=changed, relation_ids=[])
    return CommunityReport(
        entities=found.entities,
        relations=found.relations,
        communities=len(found.sizes),
        largest=max(found.sizes, default=0),
        isolated=found.isolated,
        modularity=found.modularity,
        changed=len(changed),
        seconds=round(time.perf_counter() - started, 3),
    )


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
        call_cost = llm_cost(reply.usage.prompt_tokens, reply.usage.completion_tokens)
        title, summary = split_summary(reply.content)
        with transaction.atomic():
            LlmCall.objects.create(
                workspace=workspace,
                purpose="summary",
                model=reply.model,
                prompt_tokens=reply.usage.prompt_tokens,
                completion_tokens=reply.usage.completion_tokens,
                usage_estimated=reply.usage.estimated,
                cost=call_cost,
                duration_ms=reply.duration_ms,
                attempts=reply.attempts,
            )
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
