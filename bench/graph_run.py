"""The graph backend benchmark itself; run it through bench/graph.py (see there)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import networkx as nx
from django.core.management import call_command
from django.db import connection

from bench.cleanup import drop_workspace
from knowledge.actions.schema import do_ensure_default_schema
from knowledge.graph.base import GraphResult, PathResult
from knowledge.graph.postgres import PostgresGraphBackend
from knowledge.models import Entity, Relation
from workspaces.actions.workspaces import do_create_workspace
from workspaces.models import Workspace

# Source ranks are drawn as N * u**SKEW (u uniform): the probability of rank <= x is
# (x/N)**(1/SKEW), a power law whose first ranks are hubs with thousands of edges (at 100k
# entities / 1M relations rank 1 gets ~10k) while half of the entities get a handful. Targets
# are uniform, so every entity has some incoming edges and the graph is one component.
SKEW = 2.5
# How often each relation type is drawn (the default schema's nine types).
TYPE_WEIGHTS = [30, 15, 12, 10, 8, 8, 7, 5, 5]


def rank_entities(cursor: Any, workspace_id: int) -> None:
    """A temporary table `bench_rank` (rank from 1, id) of the workspace's entities, for
    drawing relation ends by rank (other benchmarks may be inserting into the same table, so
    the ids need not be contiguous). Dropped by the caller."""
    cursor.execute(
        """
        CREATE TEMP TABLE bench_rank AS
        SELECT row_number() OVER (ORDER BY id) AS rank, id FROM knowledge_entity
        WHERE workspace_id = %s
        """,
        [workspace_id],
    )
    cursor.execute("CREATE UNIQUE INDEX ON bench_rank (rank)")
    cursor.execute("ANALYZE bench_rank")


def load_graph(workspace: Workspace, *, entities: int, relations: int, seed: int) -> None:
    """Fill the workspace with `entities` entities and `relations` distinct active relations,
    set-based in the server (generate_series), seeded so every run builds the same graph."""
    with connection.cursor() as cursor:
        # One process, one plan: parallel workers would draw their own random numbers.
        cursor.execute("SET max_parallel_workers_per_gather = 0")
        cursor.execute("SELECT setseed(%s)", [1 / (seed + 2)])
        cursor.execute(
            """
            INSERT INTO knowledge_entity (
                workspace_id, name, canonical_name, type_id, type_votes, type_curated,
                retrieved_count, description, summary, summary_hash, aliases, embedding_model,
                mention_count, source_ids, properties, state, blocking_keys, curated,
                created_at, updated_at)
            SELECT %(ws)s, 'Entity ' || i, 'entity ' || i,
                   types.ids[1 + (i * 7919) %% cardinality(types.ids)], '{}', false,
                   0, '', '', '', '[]', '',
                   1 + floor(random() ^ 3 * 60)::int, '{}', '{}', 'active', '{}', false,
                   now(), now()
            FROM generate_series(1, %(n)s) AS i,
                 (SELECT array_agg(id ORDER BY name) AS ids FROM knowledge_entitytype
                  WHERE workspace_id = %(ws)s) AS types
            """,
            {"ws": workspace.pk, "n": entities},
        )
        rank_entities(cursor, workspace.pk)
        # A few percent more candidates than needed: duplicates of (source, target, type)
        # are dropped, then exactly `relations` are kept.
        cursor.execute(
            """
            INSERT INTO knowledge_relation (
                workspace_id, source_id, target_id, type_id, description, keywords, weight,
                evidence_count, state, curated, description_curated, created_at, updated_at)
            SELECT %(ws)s, s.id, t.id, c.type_id, '', '[]', c.weight, 1, 'active', false, false,
                   now(), now()
            FROM (
                SELECT DISTINCT ON (a, b, type_id) a, b, type_id, weight
                FROM (
                    SELECT CASE WHEN flip THEN tr ELSE sr END AS a,
                           CASE WHEN flip THEN sr ELSE tr END AS b,
                           types.ids[(SELECT count(*) FROM unnest(cum) AS x WHERE x < pick) + 1]
                               AS type_id,
                           round((1 + random() * 9)::numeric, 1)::float AS weight
                    FROM (
                        SELECT 1 + floor(%(n)s * random() ^ %(skew)s)::bigint AS sr,
                               1 + floor(%(n)s * random())::bigint AS tr,
                               random() < 0.5 AS flip,
                               random() * %(total)s AS pick
                        FROM generate_series(1, %(candidates)s)
                    ) AS raw,
                    (SELECT array_agg(id ORDER BY name) AS ids FROM knowledge_relationtype
                     WHERE workspace_id = %(ws)s) AS types,
                    (SELECT array_agg(s ORDER BY o) AS cum FROM (
                        SELECT o, sum(w) OVER (ORDER BY o) AS s
                        FROM unnest(%(weights)s::int[]) WITH ORDINALITY AS u(w, o)) AS z
                    ) AS cumulative
                ) AS drawn
                ORDER BY a, b, type_id
            ) AS c
            JOIN bench_rank AS s ON s.rank = c.a
            JOIN bench_rank AS t ON t.rank = c.b
            ORDER BY random()
            LIMIT %(m)s
            """,
            {
                "ws": workspace.pk,
                "n": entities,
                "m": relations,
                "candidates": int(relations * 1.06) + 100,
                "total": sum(TYPE_WEIGHTS),
                "skew": SKEW,
                "weights": TYPE_WEIGHTS,
            },
        )
        cursor.execute("DROP TABLE bench_rank")
        cursor.execute("RESET max_parallel_workers_per_gather")


def settle(*, wait: float) -> dict[str, Any]:
    """VACUUM (ANALYZE) the graph tables, as autovacuum would after a bulk load: statistics,
    and the visibility map that lets traversal answer from the covering indexes alone (the
    relation indexes for each hop, `entity_active_walk` for each candidate's degree). A
    transaction left open in this database by another process (another benchmark) keeps
    VACUUM from marking pages all-visible; then try again for up to `wait` seconds. Returns
    the share of relation and entity pages all-visible, which the figures depend on."""
    started = time.perf_counter()
    while True:
        with connection.cursor() as cursor:
            cursor.execute("VACUUM (ANALYZE) knowledge_entity")
            cursor.execute("VACUUM (ANALYZE) knowledge_relation")
            cursor.execute(
                "SELECT relname, relallvisible::float / greatest(relpages, 1) FROM pg_class "
                "WHERE relname IN ('knowledge_relation', 'knowledge_entity')"
            )
            visible = {name: float(share) for name, share in cursor.fetchall()}
        waited = time.perf_counter() - started
        if min(visible.values()) >= 0.95 or waited >= wait:
            return {
                "relation_pages_all_visible": round(visible["knowledge_relation"], 3),
                "entity_pages_all_visible": round(visible["knowledge_entity"], 3),
                "waited_s": round(waited),
            }
        time.sleep(20)


def workspace_for(*, entities: int, relations: int, seed: int) -> tuple[Workspace, float | None]:
    """The bench workspace of this size and seed: reused when a previous run left it
    complete (loading 1M relations takes minutes), else (re)built. Returns it and the load
    time (None when reused)."""
    slug = f"bench-graph-{entities}-{relations}-{seed}"
    workspace = Workspace.objects.filter(slug=slug).first()
    if workspace is not None:
        complete = (
            Entity.objects.filter(workspace=workspace).count() == entities
            and Relation.objects.filter(workspace=workspace).count() == relations
        )
        if complete:
            return workspace, None
        drop(workspace)
    workspace = do_create_workspace(slug=slug)
    do_ensure_default_schema(workspace=workspace)
    started = time.perf_counter()
    load_graph(workspace, entities=entities, relations=relations, seed=seed)
    return workspace, time.perf_counter() - started


def drop(workspace: Workspace) -> None:
    """Delete a bench workspace set-based (the ORM's cascade would load every row)."""
    drop_workspace(workspace)


def in_memory(workspace: Workspace) -> tuple[nx.Graph, dict[int, int]]:
    """The same active graph in networkx (undirected: the queries walk both directions),
    and each entity's degree as the contract counts it (parallel relations each, a
    self-loop once)."""
    graph = nx.Graph()
    degree: dict[int, int] = {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM knowledge_entity WHERE workspace_id = %s AND state = 'active'",
            [workspace.pk],
        )
        ids = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            "SELECT source_id, target_id FROM knowledge_relation "
            "WHERE workspace_id = %s AND state = 'active'",
            [workspace.pk],
        )
        edges = cursor.fetchall()
    graph.add_nodes_from(ids)
    graph.add_edges_from(edges)
    degree = dict.fromkeys(ids, 0)
    for source, target in edges:
        degree[source] += 1
        if target != source:
            degree[target] += 1
    return graph, degree


def nx_neighborhood(
    graph: nx.Graph, degree: dict[int, int], seed: int, *, hops: int, limit: int
) -> tuple[dict[int, int], list[tuple[int, int]], bool]:
    """The contract's neighbourhood with networkx's BFS layers: nearest first, a cut level
    keeps its highest-degree (then lowest-id) nodes, `truncated` as the backend sets it;
    plus the edges among the nodes, as the backend returns them."""
    depth: dict[int, int] = {}
    truncated = False
    for level, layer in enumerate(nx.bfs_layers(graph, [seed])):
        if level > hops:
            break
        room = limit - len(depth)
        if room <= 0:
            truncated = bool(layer)
            break
        if len(layer) > room:
            layer = sorted(layer, key=lambda n: (-degree[n], n))[:room]
            truncated = True
        depth.update(dict.fromkeys(layer, level))
        if truncated:
            break
    edges = [(u, v) for u in depth for v in graph.adj[u] if v in depth and u <= v]
    return depth, edges, truncated


def nx_path(graph: nx.Graph, source: int, target: int, *, max_hops: int) -> list[int] | None:
    try:
        path: list[int] = nx.bidirectional_shortest_path(graph, source, target)
    except nx.NetworkXNoPath:
        return None
    return path if len(path) - 1 <= max_hops else None


def timed(call: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    result = call(*args, **kwargs)
    return result, (time.perf_counter() - started) * 1000


class ServerCpu:
    """CPU time the connection's server process spent, read from /proc/<pid>/schedstat: on a
    shared machine wall-clock times of the same query vary 2-3x with the other work, the
    CPU it costs hardly. Available only when the server runs on this machine (the embedded
    one) and its process can be read; else `read()` is None and the figure is left out."""

    def __init__(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            self.path = f"/proc/{cursor.fetchone()[0]}/schedstat"
        self.available = self.read() is not None

    def read(self) -> float | None:
        try:
            with open(self.path) as stat:
                return int(stat.read().split()[0]) / 1e6
        except (OSError, ValueError, IndexError):
            return None


def timed_pg(
    cpu: ServerCpu, call: Callable[..., Any], **kwargs: Any
) -> tuple[Any, float, float | None, float]:
    """One backend call: its result, wall-clock ms, the server's CPU ms (or None), and this
    process's CPU ms (the driver reading the rows and the answer's objects being built:
    with the server's, where a query's time goes when the wall clock is noisy)."""
    before = cpu.read() if cpu.available else None
    client_before = time.process_time()
    result, elapsed = timed(call, **kwargs)
    client = (time.process_time() - client_before) * 1000
    after = cpu.read() if before is not None else None
    return result, elapsed, None if before is None or after is None else after - before, client


class Baseline:
    """Another version of the backend module (a file, e.g. knowledge/graph/postgres.py of an
    older checkout): every query is also asked of it, right before or after this tree's
    backend (the order drawn per query), on the same connection and the same schema, so the
    two are compared at the same moments of a shared machine rather than in runs minutes
    apart. Only the Python side and the SQL it sends differ: a change of schema (a migration)
    is compared by alternating whole runs instead. Its answers must equal this backend's,
    field for field (nodes with every field, edge ids, `truncated`, the exact path)."""

    def __init__(self, path: str, seed: int) -> None:
        spec = importlib.util.spec_from_file_location("bench_baseline_graph_backend", path)
        if spec is None or spec.loader is None:
            raise SystemExit(f"--baseline: cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self.backend = module.PostgresGraphBackend("baseline", {})
        self.rng = random.Random(seed)
        self.samples: dict[str, tuple[list[float], list[float], list[float], list[bool]]] = {}

    def call(
        self, label: str, cpu: ServerCpu, new: Callable[..., Any], method: str, **kwargs: Any
    ) -> tuple[Any, float, float | None, float]:
        """`new(**kwargs)` timed as `timed_pg` does, and the baseline's `method` before or
        after it; the baseline's figures and whether its answer was the same are kept."""
        old = getattr(self.backend, method)
        first = self.rng.random() < 0.5
        if first:
            old_result, old_ms, old_server, old_client = timed_pg(cpu, old, **kwargs)
        measured = timed_pg(cpu, new, **kwargs)
        if not first:
            old_result, old_ms, old_server, old_client = timed_pg(cpu, old, **kwargs)
        wall, server, client, same = self.samples.setdefault(label, ([], [], [], []))
        wall.append(old_ms)
        if old_server is not None:
            server.append(old_server)
        client.append(old_client)
        same.append(old_result == measured[0])
        return measured

    def summary(self, label: str, pg_ms: list[float]) -> dict[str, Any]:
        """The baseline's figures for `label` since the last summary (one round)."""
        wall, server, client, same = self.samples.pop(label)
        figures: dict[str, Any] = percentiles(wall)
        if server:
            figures["server_cpu_p50_ms"] = round(statistics.median(server), 2)
        figures["client_cpu_p50_ms"] = round(statistics.median(client), 2)
        new_p50 = statistics.median(pg_ms)
        return {
            "baseline": figures,
            "ratio_to_baseline_p50": round(new_p50 / statistics.median(wall), 3),
            "same_as_baseline": f"{sum(same)}/{len(same)}",
        }


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 2),
        "mean_ms": round(statistics.fmean(ordered), 2),
    }


def compare(
    name: str,
    pg_ms: list[float],
    nx_ms: list[float],
    agree: int,
    extra: dict[str, Any],
    cpu_ms: list[float] | None = None,
    client_ms: list[float] | None = None,
) -> dict[str, Any]:
    pg, base = percentiles(pg_ms), percentiles(nx_ms)
    if cpu_ms:
        pg["server_cpu_p50_ms"] = round(statistics.median(cpu_ms), 2)
    if client_ms:
        pg["client_cpu_p50_ms"] = round(statistics.median(client_ms), 2)
    return {
        "query": name,
        "queries": len(pg_ms),
        "postgres": pg,
        "networkx": base,
        "ratio_p50": round(pg["p50_ms"] / base["p50_ms"], 2) if base["p50_ms"] else None,
        "ratio_p95": round(pg["p95_ms"] / base["p95_ms"], 2) if base["p95_ms"] else None,
        "same_answer": f"{agree}/{len(pg_ms)}",
        **extra,
    }


def bench_neighborhood(
    backend: PostgresGraphBackend,
    cpu: ServerCpu,
    workspace: Workspace,
    graph: nx.Graph,
    degree: dict[int, int],
    seeds: list[int],
    *,
    hops: int,
    limit: int,
    baseline: Baseline | None = None,
) -> dict[str, Any]:
    pg_ms: list[float] = []
    cpu_ms: list[float] = []
    client_ms: list[float] = []
    nx_ms: list[float] = []
    agree = truncated = 0
    sizes: list[int] = []
    for seed in seeds:
        kwargs = {"workspace_id": workspace.pk, "seeds": [seed], "hops": hops, "limit": limit}
        if baseline is None:
            result, elapsed, used, client = timed_pg(cpu, backend.neighborhood, **kwargs)
        else:
            result, elapsed, used, client = baseline.call(
                f"hops={hops}", cpu, backend.neighborhood, "neighborhood", **kwargs
            )
        pg_ms.append(elapsed)
        if used is not None:
            cpu_ms.append(used)
        client_ms.append(client)
        (depth, edges, cut), elapsed = timed(
            nx_neighborhood, graph, degree, seed, hops=hops, limit=limit
        )
        nx_ms.append(elapsed)
        assert isinstance(result, GraphResult)
        got = {n.id: n.depth for n in result.nodes}
        pairs = {(min(e.source, e.target), max(e.source, e.target)) for e in result.edges}
        agree += got == depth and pairs == set(edges) and result.truncated == cut
        truncated += result.truncated
        sizes.append(len(result.nodes))
    return compare(
        f"neighborhood hops={hops} limit={limit}",
        pg_ms,
        nx_ms,
        agree,
        {
            "truncated": truncated,
            "mean_nodes": round(statistics.fmean(sizes), 1),
            **({} if baseline is None else baseline.summary(f"hops={hops}", pg_ms)),
        },
        cpu_ms,
        client_ms,
    )


def bench_paths(
    backend: PostgresGraphBackend,
    cpu: ServerCpu,
    workspace: Workspace,
    graph: nx.Graph,
    pairs: list[tuple[int, int, int]],
    baseline: Baseline | None = None,
) -> dict[str, Any]:
    pg_ms: list[float] = []
    cpu_ms: list[float] = []
    client_ms: list[float] = []
    nx_ms: list[float] = []
    agree = found = 0
    lengths: list[int] = []
    for source, target, max_hops in pairs:
        kwargs = {
            "workspace_id": workspace.pk,
            "source": source,
            "target": target,
            "max_hops": max_hops,
        }
        if baseline is None:
            result, elapsed, used, client = timed_pg(cpu, backend.shortest_path, **kwargs)
        else:
            result, elapsed, used, client = baseline.call(
                "path", cpu, backend.shortest_path, "shortest_path", **kwargs
            )
        pg_ms.append(elapsed)
        if used is not None:
            cpu_ms.append(used)
        client_ms.append(client)
        path, elapsed = timed(nx_path, graph, source, target, max_hops=max_hops)
        nx_ms.append(elapsed)
        assert result is None or isinstance(result, PathResult)
        mine = None if result is None else result.length
        theirs = None if path is None else len(path) - 1
        agree += mine == theirs
        if result is not None:
            found += 1
            lengths.append(result.length)
    return compare(
        "shortest_path max_hops=4..6",
        pg_ms,
        nx_ms,
        agree,
        {
            "found": found,
            "mean_length": round(statistics.fmean(lengths), 2) if lengths else None,
            **({} if baseline is None else baseline.summary("path", pg_ms)),
        },
        cpu_ms,
        client_ms,
    )


def summary(rounds: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per query, the median over rounds of each figure (one round: its figures), and
    whether every answer of every round was networkx's."""
    out = []
    for runs in zip(*rounds, strict=True):
        row: dict[str, Any] = {"query": runs[0]["query"], "rounds": len(runs)}
        for side in ("postgres", "networkx"):
            for figure in ("p50_ms", "p95_ms", "server_cpu_p50_ms", "client_cpu_p50_ms"):
                values = [r[side][figure] for r in runs if figure in r[side]]
                if values:
                    row[f"{side}_{figure}"] = round(statistics.median(values), 2)
        if row.get("networkx_p50_ms"):
            row["ratio_p50"] = round(row["postgres_p50_ms"] / row["networkx_p50_ms"], 2)
        row["same"] = all(r["same_answer"].split("/")[0] == str(r["queries"]) for r in runs)
        if "baseline" in runs[0]:
            for figure in ("p50_ms", "p95_ms", "server_cpu_p50_ms", "client_cpu_p50_ms"):
                values = [r["baseline"][figure] for r in runs if figure in r["baseline"]]
                if values:
                    row[f"baseline_{figure}"] = round(statistics.median(values), 2)
            ratios = [r["ratio_to_baseline_p50"] for r in runs]
            row["ratio_to_baseline_p50"] = round(statistics.median(ratios), 3)
            row["same_as_baseline"] = all(
                r["same_as_baseline"].split("/")[0] == str(r["queries"]) for r in runs
            )
        out.append(row)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description="Graph backend benchmark; see bench/graph.py.")
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--relations", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--limit", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--drop", action="store_true", help="delete the bench graph afterwards")
    parser.add_argument(
        "--settle", type=float, default=900, help="seconds to wait for VACUUM to take"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run the same queries this many times; the summary gives the median of each figure",
    )
    parser.add_argument(
        "--baseline",
        metavar="FILE",
        help="another version of knowledge/graph/postgres.py to ask every query too, "
        "interleaved (see Baseline)",
    )
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    load = os.getloadavg()
    workspace, loaded = workspace_for(
        entities=args.entities, relations=args.relations, seed=args.seed
    )
    vacuum = settle(wait=args.settle)
    (graph, degree), built = timed(in_memory, workspace)
    print(
        json.dumps(
            {
                "graph": {
                    "entities": graph.number_of_nodes(),
                    "relations": args.relations,
                    "max_degree": max(degree.values(), default=0),
                    "load_s": None if loaded is None else round(loaded, 1),
                    "networkx_build_s": round(built / 1000, 1),
                },
                "vacuum": vacuum,
                "machine": {"cpus": os.cpu_count(), "loadavg_at_start": load},
            }
        ),
        flush=True,
    )
    backend = PostgresGraphBackend("bench", {})
    cpu = ServerCpu()
    baseline = None if args.baseline is None else Baseline(args.baseline, args.seed)
    rng = random.Random(args.seed)
    ids = sorted(degree)
    seeds = [rng.choice(ids) for _ in range(args.queries)]
    # Warm both sides up (plans, caches) on queries that are not measured.
    for seed in rng.sample(ids, 10):
        backend.neighborhood(workspace_id=workspace.pk, seeds=[seed], hops=2, limit=args.limit)
        nx_neighborhood(graph, degree, seed, hops=2, limit=args.limit)
    pairs = [(rng.choice(ids), rng.choice(ids), 4 + i % 3) for i in range(args.queries)]
    rounds: list[list[dict[str, Any]]] = []
    for number in range(1, args.rounds + 1):
        results = []
        for hops in (2, 3):
            results.append(
                bench_neighborhood(
                    backend,
                    cpu,
                    workspace,
                    graph,
                    degree,
                    seeds,
                    hops=hops,
                    limit=args.limit,
                    baseline=baseline,
                )
            )
            print(json.dumps({"round": number, **results[-1]}), flush=True)
        results.append(bench_paths(backend, cpu, workspace, graph, pairs, baseline))
        print(json.dumps({"round": number, **results[-1]}), flush=True)
        rounds.append(results)
    _, hubs_ms = timed(backend.hubs, workspace_id=workspace.pk, limit=20)
    _, stats_ms = timed(backend.stats, workspace_id=workspace.pk)
    print(
        json.dumps(
            {
                "once": {"hubs_ms": round(hubs_ms, 1), "stats_ms": round(stats_ms, 1)},
                "machine": {"loadavg_at_end": os.getloadavg()},
                "summary": summary(rounds),
            }
        ),
        flush=True,
    )
    if args.drop:
        drop(workspace)
