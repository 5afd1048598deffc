"""The API load benchmark itself; run it through bench/load.py (see there)."""

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
import threading
import time
from pathlib import Path

import httpx
import numpy as np
from django.db import connection

from bench.cleanup import drop_workspace
from ingest.models import Chunk, Document, Source
from knowledge.actions.schema import do_ensure_default_schema
from knowledge.models import (
    Entity,
    EntityType,
    ExtractionRun,
    Mention,
    Relation,
    RelationType,
)
from workspaces.actions.tokens import do_create_api_token
from workspaces.actions.workspaces import do_create_user, do_create_workspace, do_set_membership
from workspaces.models import Membership, Workspace

ROOT = Path(__file__).resolve().parent.parent
VOCABULARY = [
    "harbour", "crane", "pilot", "storm", "repair", "policy", "budget", "council", "river",
    "bridge", "engineer", "sensor", "network", "model", "vector", "index", "query", "archive",
    "ledger", "contract", "vessel", "cargo", "customs", "tariff", "turbine", "grid", "solar",
    "battery", "reactor", "pipeline", "refinery", "railway", "signal", "depot", "tunnel",
    "clinic", "vaccine", "trial", "protein", "enzyme", "genome", "sample", "survey", "census",
    "election", "treaty",
]  # fmt: skip
SYLLABLES = ["ka", "lo", "mi", "ra", "ten", "vo", "sul", "dar", "ne", "bri", "gor", "lin"]


def _name(rng: random.Random) -> str:
    first = "".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize()
    last = "".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize()
    return f"{first} {last}"


def _slug(entities: int, chunks: int) -> str:
    return f"bench-load-{entities}-{chunks}"


def reuse(*, entities: int, chunks: int) -> tuple[Workspace, list[int], str] | None:
    """The workspace a `--keep` run of this size left, its entity ids, and a new bearer
    token for its editor; None when there is none."""
    workspace = Workspace.objects.filter(slug=_slug(entities, chunks)).first()
    if workspace is None:
        return None
    membership = Membership.objects.for_workspace(workspace).select_related("user").first()
    if membership is None:
        return None
    token = do_create_api_token(workspace=workspace, user=membership.user, name="load")
    ids = list(Entity.objects.for_workspace(workspace).order_by("pk").values_list("pk", flat=True))
    return workspace, ids, token.plaintext


def seed(
    *, entities: int, chunks: int, rng: random.Random, keep: bool = False
) -> tuple[Workspace, list[int], str]:
    """A workspace with a synthetic graph and corpus; returns it, its entity ids, and a
    bearer token for an editor in it. A kept one has a fixed slug (see `reuse`)."""
    slug = _slug(entities, chunks) if keep else f"bench-load-{time.time_ns()}"
    workspace = do_create_workspace(slug=slug)
    do_ensure_default_schema(workspace=workspace)
    user = do_create_user(username=f"load-{time.time_ns()}")
    do_set_membership(workspace=workspace, username=user.username, role="editor")
    token = do_create_api_token(workspace=workspace, user=user, name="load").plaintext
    entity_types = list(EntityType.objects.filter(workspace=workspace))
    relation_types = list(RelationType.objects.filter(workspace=workspace))
    source = Source.objects.create(workspace=workspace, kind="text", name="load corpus")
    names: dict[str, None] = {}
    while len(names) < entities:
        names[_name(rng)] = None
    made = Entity.objects.bulk_create(
        [
            Entity(
                workspace=workspace, name=name, canonical_name=name.lower(),
                type=entity_types[i % len(entity_types)], mention_count=1,
            )
            for i, name in enumerate(names)
        ],
        batch_size=5000,
    )  # fmt: skip
    ids = [e.pk for e in made]
    # Power-law-ish degrees: a few hubs, most entities with a handful of edges.
    edges: set[tuple[int, int, int]] = set()
    while len(edges) < entities * 4:
        a = ids[int(len(ids) ** rng.random()) - 1]
        b = rng.choice(ids)
        if a != b:
            edges.add((a, b, relation_types[rng.randrange(len(relation_types))].pk))
    Relation.objects.bulk_create(
        [
            Relation(workspace=workspace, source_id=a, target_id=b, type_id=t,
                     weight=round(rng.uniform(0.1, 1.0), 2), evidence_count=1)
            for a, b, t in edges
        ],
        batch_size=5000,
    )  # fmt: skip
    per_document = 50
    documents = Document.objects.bulk_create(
        [
            Document(workspace=workspace, source=source, path=f"doc-{i}.txt", title=f"Doc {i}")
            for i in range((chunks + per_document - 1) // per_document)
        ]
    )
    vectors = np.random.default_rng(1).normal(size=(chunks, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    from ingest.embeddings import get_embedder

    model = get_embedder().model_id
    rows = []
    name_list = list(names)
    for i in range(chunks):
        mentioned = [rng.choice(name_list) for _ in range(2)]
        words = [rng.choice(VOCABULARY) for _ in range(60)]
        text = " ".join([*words[:20], mentioned[0], *words[20:40], mentioned[1], *words[40:]])
        rows.append(
            Chunk(
                workspace=workspace, document=documents[i // per_document],
                ordinal=i % per_document, text=text, char_start=0, char_end=len(text),
                token_count=80, content_hash=f"{i:064x}", embedding=vectors[i],
                embedding_model=model, embedding_dim=384,
            )
        )  # fmt: skip
    made_chunks = Chunk.objects.bulk_create(rows, batch_size=2000)
    run = ExtractionRun.objects.create(
        workspace=workspace, window_hash="0" * 64, prompt_version="bench", model="bench",
        schema_hash="0" * 64, extractor="offline", source=source,
    )  # fmt: skip
    Mention.objects.bulk_create(
        [
            Mention(workspace=workspace, entity_id=rng.choice(ids), chunk=chunk, run=run,
                    surface_form="x", extracted_type="person")
            for chunk in made_chunks
            for _ in range(2)
        ],
        batch_size=5000,
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return workspace, ids, token


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(*, port: int, workers: int, threads: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "bench-only-not-secret-" + "x" * 40,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "GRAPHLOOM_SSL_REDIRECT": "0",
        # The bench's own database (bench/bootstrap.py sets it).
        "GRAPHLOOM_DB_NAME": os.environ["GRAPHLOOM_DB_NAME"],
    }
    return subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", str(workers), "--threads", str(threads), "--worker-class", "gthread",
         "--timeout", "120", "--log-level", "warning"],
        cwd=ROOT, env=env, start_new_session=True,
    )  # fmt: skip


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server_processes(server: subprocess.Popen[bytes]) -> list[int]:
    """The gunicorn workers and the database backends of this database that are not this
    process's own connection: what serves the requests. Linux only (/proc); the backends
    only when the database runs on this machine (the embedded server)."""
    workers = subprocess.run(
        ["pgrep", "-P", str(server.pid)], capture_output=True, text=True, check=False
    ).stdout.split()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
        )
        backends = [row[0] for row in cursor.fetchall()]
    return [int(pid) for pid in workers] + backends


def run_clients(
    *, base: str, slug: str, token: str, ids: list[int], clients: int, seconds: float
) -> list[tuple[str, int, float]]:
    """(operation, status (0 = transport error), seconds) of every request."""
    results: list[tuple[str, int, float]] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    headers = {"Authorization": f"Bearer {token}"}

    def client(number: int) -> None:
        rng = random.Random(number)
        own: list[tuple[str, int, float]] = []
        with httpx.Client(base_url=base, headers=headers, timeout=60) as http:
            while time.monotonic() < deadline:
                roll = rng.random()
                entity = rng.choice(ids)
                started = time.perf_counter()
                try:
                    if roll < 0.3:
                        op = "search"
                        words = " ".join(rng.choice(VOCABULARY) for _ in range(3))
                        response = http.post(
                            f"/api/v1/workspaces/{slug}/search", json={"query": words, "limit": 10}
                        )
                    elif roll < 0.65:
                        op = "neighborhood"
                        response = http.get(
                            f"/api/v1/workspaces/{slug}/entities/{entity}/neighborhood",
                            params={"hops": 2, "limit": 200},
                        )
                    else:
                        op = "entity"
                        response = http.get(f"/api/v1/workspaces/{slug}/entities/{entity}")
                    status = response.status_code
                except httpx.HTTPError:
                    status = 0
                own.append((op, status, time.perf_counter() - started))
        with lock:
            results.extend(own)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _summary(rows: list[tuple[str, int, float]], seconds: float) -> dict[str, float | int]:
    latencies = sorted(r[2] * 1000 for r in rows)
    if not latencies:
        return {"requests": 0}

    def pct(p: float) -> float:
        return round(latencies[min(len(latencies) - 1, int(p * len(latencies)))], 1)

    return {
        "requests": len(rows),
        "per_s": round(len(rows) / seconds, 1),
        "errors": sum(1 for r in rows if not 200 <= r[1] < 300),
        "p50_ms": pct(0.5),
        "p95_ms": pct(0.95),
        "p99_ms": pct(0.99),
        "mean_ms": round(statistics.fmean(latencies), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="API load benchmark; see bench/load.py.")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--entities", type=int, default=20000)
    parser.add_argument("--chunks", type=int, default=20000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--keep", action="store_true", help="leave the workspace for --reuse")
    parser.add_argument("--reuse", action="store_true", help="use a workspace left by --keep")
    args = parser.parse_args()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    found = reuse(entities=args.entities, chunks=args.chunks) if args.reuse else None
    workspace, ids, token = found or seed(
        entities=args.entities, chunks=args.chunks, rng=random.Random(7), keep=args.keep
    )
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(port=port, workers=args.workers, threads=args.threads)
    try:
        for _ in range(120):
            try:
                if httpx.get(f"{base}/api/v1/health", timeout=5).status_code in (200, 503):
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        # Warm-up: every worker loads the embedding model and opens its connections.
        run_clients(base=base, slug=workspace.slug, token=token, ids=ids, clients=8, seconds=10)
        # The CPU the server spends per request: unlike requests/s, it hardly moves when
        # other work shares the machine (requests/s ~ cores / CPU per request when idle).
        serving = _server_processes(server)
        cpu_before = {pid: _cpu_seconds(pid) for pid in serving}
        rows = run_clients(
            base=base, slug=workspace.slug, token=token, ids=ids,
            clients=args.clients, seconds=args.seconds,
        )  # fmt: skip
        serving += [pid for pid in _server_processes(server) if pid not in cpu_before]
        cpu_spent = sum(_cpu_seconds(pid) - cpu_before.get(pid, 0.0) for pid in serving)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    statuses: dict[str, int] = {}
    for _, status, _ in rows:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
    report = {
        "clients": args.clients,
        "seconds": args.seconds,
        "server": f"gunicorn gthread, {args.workers} workers x {args.threads} threads",
        "graph": {"entities": args.entities, "relations": args.entities * 4,
                  "chunks": args.chunks},
        "overall": _summary(rows, args.seconds),
        # Gunicorn workers and their database backends (see _server_processes).
        "server_cpu_ms_per_request": round(cpu_spent * 1000 / max(1, len(rows)), 1),
        "by_operation": {
            op: _summary([r for r in rows if r[0] == op], args.seconds)
            for op in ("search", "neighborhood", "entity")
        },
        "statuses": statuses,
    }  # fmt: skip
    print(json.dumps(report, indent=2), flush=True)
    if not args.keep:
        drop_workspace(workspace)
