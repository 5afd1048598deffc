"""The MCP overhead benchmark itself; run it through bench/mcp.py (see there)."""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
from django.core.management import call_command
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from bench.retrieval_run import bench_workspace, drop, make_queries
from workspaces.actions.tokens import do_create_api_token
from workspaces.actions.workspaces import do_create_user, do_set_membership
from workspaces.models import Workspace

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "bench-only-not-secret-" + "x" * 40,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "GRAPHLOOM_SSL_REDIRECT": "0",
        "GRAPHLOOM_DB_NAME": "graphloom_bench",
        # The limit is counted on every call (that query is part of the overhead measured)
        # but set high enough never to refuse one.
        "MCP_RATE_PER_MINUTE": "1000000",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--threads", "4", "--worker-class", "gthread",
         "--timeout", "120", "--log-level", "warning"],
        cwd=ROOT, env=env, start_new_session=True,
    )  # fmt: skip


def token_for(workspace: Workspace) -> str:
    user = do_create_user(username=f"mcp-bench-{time.time_ns()}")
    do_set_membership(workspace=workspace, username=user.username, role="viewer")
    return do_create_api_token(workspace=workspace, user=user, name="mcp-bench").plaintext


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 2)


def summary(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": percentile(values, 0.50),
        "p95_ms": percentile(values, 0.95),
        "mean_ms": round(statistics.fmean(values), 2),
    }


async def measure(
    base: str, slug: str, token: str, queries: list[str], limit: int, warmup: int
) -> dict[str, Any]:
    """Each query through REST then MCP, alternating, after `warmup` of each."""
    headers = {"Authorization": f"Bearer {token}"}
    rest_times: list[float] = []
    mcp_times: list[float] = []
    sizes = {"rest": 0, "mcp": 0}
    async with (
        httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as rest,
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(f"{base}/mcp/", http_client=http), cache=None) as mcp,
    ):
        for n, query in enumerate(queries[:warmup] + queries):
            started = time.perf_counter()
            response = await rest.post(
                f"/api/v1/workspaces/{slug}/search", json={"query": query, "limit": limit}
            )
            rest_ms = (time.perf_counter() - started) * 1000
            response.raise_for_status()
            started = time.perf_counter()
            result = await mcp.call_tool("search", {"query": query, "limit": limit})
            mcp_ms = (time.perf_counter() - started) * 1000
            if result.is_error:
                raise RuntimeError(result.content)
            if n >= warmup:
                rest_times.append(rest_ms)
                mcp_times.append(mcp_ms)
                sizes["rest"] += len(response.content)
                sizes["mcp"] += len(json.dumps(result.structured_content)) + len(
                    result.content[0].text  # type: ignore[union-attr]
                )
        protocol = mcp.protocol_version
    rest_summary, mcp_summary = summary(rest_times), summary(mcp_times)
    paired = [m - r for m, r in zip(mcp_times, rest_times, strict=True)]
    return {
        "queries": len(queries),
        "protocol_version": protocol,
        "rest_search": rest_summary,
        "mcp_search": mcp_summary,
        "overhead_p50_ms": round(mcp_summary["p50_ms"] - rest_summary["p50_ms"], 2),
        "overhead_paired_median_ms": round(statistics.median(paired), 2),
        "mean_answer_bytes": {k: v // len(queries) for k, v in sizes.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="MCP overhead benchmark; see bench/mcp.py.")
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--entities", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="leave the workspace for --reuse")
    parser.add_argument("--reuse", action="store_true", help="use a workspace left by --keep")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    workspace = bench_workspace(
        chunks=args.chunks, entities=args.entities, seed=args.seed, reuse=args.reuse
    )
    queries = [q for _, q in make_queries(workspace, args.queries, random.Random(args.seed))]
    token = token_for(workspace)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(port)
    try:
        for _ in range(240):
            try:
                if httpx.get(f"{base}/api/v1/health", timeout=5).status_code in (200, 503):
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        report = anyio.run(measure, base, workspace.slug, token, queries, args.limit, args.warmup)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    report = {
        "workspace": {"chunks": args.chunks, "entities": args.entities},
        "server": "gunicorn gthread, 1 worker x 4 threads",
        "limit": args.limit,
        **report,
    }
    print(json.dumps(report, indent=2), flush=True)
    if not args.keep:
        drop(workspace)
