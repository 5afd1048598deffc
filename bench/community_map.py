"""Community map benchmark (issue 19): a planted 200,000-entity workspace, its communities
computed, and the map's two endpoints timed over HTTP.

    .venv/bin/python bench/community_map.py [--entities 200000] [--runs 5] [--keep] [--seed 1]

The workspace is loaded set-based in SQL (`load_planted`, also used by bench/explorer.py's
`--community-map`): groups of GROUP entities made of sub-groups of SUB, relations = 2 x
entities, RELATIONS_INSIDE_SUB of them inside a sub-group, RELATIONS_INSIDE_GROUP between
sub-groups of one group, the rest anywhere (so Louvain finds about one community per group,
and each group, larger than COMMUNITY_SPLIT_ABOVE, splits into sub-communities). It is kept
between runs (same size and seed) and the tables VACUUMed, as bench/graph.py does. Then:

- the communities are computed once with the real action (`do_compute_communities`: Louvain,
  the split, the stored map), timed;
- a production server (`gunicorn config.wsgi`, bench/explorer.py's helpers) is started on the
  bench database (`graphloom_bench_map`, or GRAPHLOOM_BENCH_DB_NAME), and an API token's
  client (httpx) fetches, `--runs` times each: the map's top level, the sub-map of the
  largest community, and the drill-downs (`…/communities/{key}/graph`) of that community and
  of its largest sub-community, 5,000 entities at most, as the explorer asks.

Prints JSON: one line per phase, then a summary with medians (ms) and payload sizes. The
workspace is dropped afterwards unless `--keep`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    os.environ["GRAPHLOOM_DB_NAME"] = os.environ.get(
        "GRAPHLOOM_BENCH_DB_NAME", "graphloom_bench_map"
    )
    os.environ.setdefault("GRAPHLOOM_LOG_LEVEL", "WARNING")
    import django

    django.setup()

import argparse  # noqa: E402
import json  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

from django.db import connection  # noqa: E402

GROUP = 2000
SUB = 50
RELATIONS_INSIDE_SUB = 0.7
RELATIONS_INSIDE_GROUP = 0.25
USERNAME = "bench-community-map"
DRILL_LIMIT = 5000


def load_planted(*, entities: int, seed: int = 1) -> Any:
    """The planted workspace of `entities` entities (reused when a previous run left it
    complete, else built), in the database Django is set up on. Returns the workspace."""
    from bench.cleanup import drop_workspace
    from knowledge.actions.schema import do_ensure_default_schema
    from knowledge.models import Entity, Relation
    from workspaces.actions.workspaces import do_create_workspace
    from workspaces.models import Workspace

    relations = 2 * entities
    slug = f"bench-map-{entities}-{seed}"
    workspace = Workspace.objects.filter(slug=slug).first()
    if workspace is not None:
        if (
            Entity.objects.filter(workspace=workspace).count() == entities
            and Relation.objects.filter(workspace=workspace).count() == relations
        ):
            return workspace
        _drop_map(workspace)
        drop_workspace(workspace)
    workspace = do_create_workspace(slug=slug)
    do_ensure_default_schema(workspace=workspace)
    _insert(workspace.pk, entities=entities, relations=relations, seed=seed)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE) knowledge_entity")
        cursor.execute("VACUUM (ANALYZE) knowledge_relation")
    return workspace


def _insert(workspace_id: int, *, entities: int, relations: int, seed: int) -> None:
    """Entities named by group and sub-group, then `relations` distinct relations drawn by
    the planted proportions (seeded: every run builds the same graph)."""
    from bench.graph_run import rank_entities

    params = {
        "ws": workspace_id,
        "n": entities,
        "m": relations,
        "candidates": int(relations * 1.05) + 100,
        "group": GROUP,
        "sub": SUB,
        "in_sub": RELATIONS_INSIDE_SUB,
        "in_group": RELATIONS_INSIDE_SUB + RELATIONS_INSIDE_GROUP,
    }
    with connection.cursor() as cursor:
        cursor.execute("SET max_parallel_workers_per_gather = 0")
        cursor.execute("SELECT setseed(%s)", [1 / (seed + 2)])
        cursor.execute(
            """
            INSERT INTO knowledge_entity (
                workspace_id, name, canonical_name, type_id, type_votes, type_curated,
                retrieved_count, description, summary, summary_hash, aliases, embedding_model,
                mention_count, source_ids, properties, state, blocking_keys, curated,
                created_at, updated_at)
            SELECT %(ws)s, 'G' || (i - 1) / %(group)s || ' S' || (i - 1) / %(sub)s || ' E' || i,
                   'g' || (i - 1) / %(group)s || ' s' || (i - 1) / %(sub)s || ' e' || i,
                   types.ids[1 + (i * 7919) %% cardinality(types.ids)], '{}', false,
                   0, '', '', '', '[]', '',
                   1 + floor(random() ^ 3 * 60)::int, '{}', '{}', 'active', '{}', false,
                   now(), now()
            FROM generate_series(1, %(n)s) AS i,
                 (SELECT array_agg(id ORDER BY name) AS ids FROM knowledge_entitytype
                  WHERE workspace_id = %(ws)s) AS types
            """,
            params,
        )
        rank_entities(cursor, workspace_id)
        # rank r (0-based) is in sub-group r / SUB and group r / GROUP; the other end is drawn
        # in the same sub-group, the same group, or anywhere.
        cursor.execute(
            """
            INSERT INTO knowledge_relation (
                workspace_id, source_id, target_id, type_id, description, keywords, weight,
                evidence_count, state, curated, description_curated, created_at, updated_at)
            SELECT %(ws)s, s.id, t.id, c.type_id, '', '[]', c.weight, 1, 'active', false, false,
                   now(), now()
            FROM (
                SELECT DISTINCT ON (a, b, type_id) a, b, type_id, weight FROM (
                    SELECT a, CASE
                        WHEN kind < %(in_sub)s THEN
                            least((a / %(sub)s) * %(sub)s + floor(pick * %(sub)s)::bigint,
                                  %(n)s - 1)
                        WHEN kind < %(in_group)s THEN
                            least((a / %(group)s) * %(group)s + floor(pick * %(group)s)::bigint,
                                  %(n)s - 1)
                        ELSE floor(pick * %(n)s)::bigint END AS b,
                        types.ids[1 + floor(random() * cardinality(types.ids))::int] AS type_id,
                        round((1 + random() * 9)::numeric, 1)::float AS weight
                    FROM (
                        SELECT floor(%(n)s * random())::bigint AS a, random() AS kind,
                               random() AS pick
                        FROM generate_series(1, %(candidates)s)
                    ) AS raw,
                    (SELECT array_agg(id ORDER BY name) AS ids FROM knowledge_relationtype
                     WHERE workspace_id = %(ws)s) AS types
                ) AS drawn
                WHERE a <> b
                ORDER BY a, b, type_id
            ) AS c
            JOIN bench_rank AS s ON s.rank = c.a + 1
            JOIN bench_rank AS t ON t.rank = c.b + 1
            ORDER BY random()
            LIMIT %(m)s
            """,
            params,
        )
        cursor.execute("DROP TABLE bench_rank")
        cursor.execute("RESET max_parallel_workers_per_gather")


def _drop_map(workspace: Any) -> None:
    """The stored map's rows, in SQL (the workspace's ORM cascade would load them all)."""
    with connection.cursor() as cursor:
        for table in ("knowledge_communitylink", "knowledge_community", "knowledge_communityrun"):
            cursor.execute(f"DELETE FROM {table} WHERE workspace_id = %s", [workspace.pk])  # noqa: S608


def _token(workspace: Any) -> str:
    """An API token of the bench user, a viewer of the workspace."""
    from django.contrib.auth import get_user_model

    from workspaces.actions.tokens import do_create_api_token
    from workspaces.actions.workspaces import do_set_membership
    from workspaces.models import Role

    user = get_user_model().objects.filter(username=USERNAME).first()
    if user is None:
        user = get_user_model().objects.create_user(username=USERNAME, password=None)
    do_set_membership(workspace=workspace, username=USERNAME, role=Role.VIEWER)
    issued = do_create_api_token(workspace=workspace, user=user, name=f"bench {time.time()}")
    return str(issued.plaintext)


def _timed_get(client: Any, url: str, runs: int) -> dict[str, Any]:
    """`runs` GETs of `url` (after one warm-up): the median and each duration in ms, and the
    last answer's bytes (raw; gzip as sent)."""
    client.get(url).raise_for_status()
    samples = []
    response = None
    for _ in range(runs):
        started = time.perf_counter()
        response = client.get(url)
        response.raise_for_status()
        samples.append((time.perf_counter() - started) * 1000)
    assert response is not None
    return {
        "median_ms": round(statistics.median(samples), 1),
        "ms": [round(s, 1) for s in samples],
        "bytes": len(response.content),
        "sent_bytes": int(response.headers.get("content-length") or 0) or None,
        "json": response.json(),
    }


def measure(base: str, slug: str, token: str, runs: int) -> dict[str, Any]:
    import httpx

    api = f"{base}/api/v1/workspaces/{slug}/communities"
    headers = {"Authorization": f"Bearer {token}", "Accept-Encoding": "gzip"}
    with httpx.Client(headers=headers, timeout=300) as client:
        top = _timed_get(client, f"{api}/map", runs)
        listed = top.pop("json")
        if listed["computing"] or not listed["communities"]:
            raise RuntimeError(f"the map is not computed: {listed}")
        largest = listed["communities"][0]
        result: dict[str, Any] = {
            "map": top | {"communities": len(listed["communities"]), "others": listed["others"]},
        }
        drill_key = largest["key"]
        if largest["has_children"]:
            sub = _timed_get(client, f"{api}/map?parent={largest['key']}", runs)
            children = sub.pop("json")["communities"]
            result["sub_map"] = sub | {"key": largest["key"], "communities": len(children)}
            drill_key = children[0]["key"]
        for name, key in (("drill_community", largest["key"]), ("drill", drill_key)):
            drilled = _timed_get(client, f"{api}/{key}/graph?limit={DRILL_LIMIT}", runs)
            payload = drilled.pop("json")
            result[name] = drilled | {
                "key": key,
                "nodes": len(payload["nodes"]),
                "edges": len(payload["edges"]),
                "count": payload["count"],
                "stubs": len(payload["stubs"]),
                "neighbours": len(payload["neighbours"]),
            }
            columns = client.get(f"{api}/{key}/graph?limit={DRILL_LIMIT}&format=columns")
            result[name]["columns_bytes"] = len(columns.content)
    return result


def main() -> None:
    from django.conf import settings
    from django.core.management import call_command

    from bench.cleanup import drop_workspace
    from bench.server import free_port, start_server, wait_for
    from knowledge.actions.communities import do_compute_communities

    parser = argparse.ArgumentParser(description="Community map benchmark; see the docstring.")
    parser.add_argument("--entities", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5, help="GETs per endpoint (medians)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the bench workspace")
    parser.add_argument("--no-http", action="store_true", help="load and compute only (no server)")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    load = os.getloadavg()
    started = time.perf_counter()
    workspace = load_planted(entities=args.entities, seed=args.seed)
    loaded = time.perf_counter() - started
    print(json.dumps({"prepared": workspace.slug, "load_s": round(loaded, 1)}), flush=True)
    report = do_compute_communities(workspace=workspace)
    computed = {
        "seconds": report.seconds,
        "communities": report.communities,
        "largest": report.largest,
        "modularity": report.modularity,
        "split": report.split,
        "subcommunities": report.subcommunities,
        "split_above": settings.COMMUNITY_SPLIT_ABOVE,
    }
    print(json.dumps({"computed": computed}), flush=True)
    summary: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "loadavg_at_start": load},
        "entities": args.entities,
        "relations": 2 * args.entities,
        "compute": computed,
    }
    try:
        if not args.no_http:
            token = _token(workspace)
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            server = start_server(port)
            try:
                wait_for(base)
                summary["http"] = measure(base, workspace.slug, token, args.runs)
            finally:
                os.killpg(server.pid, signal.SIGTERM)
                try:
                    server.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(server.pid, signal.SIGKILL)
    finally:
        if not args.keep:
            _drop_map(workspace)
            drop_workspace(workspace)
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
