"""The vector recall benchmark itself; run it through bench/vector_recall.py (see there)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import struct
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.test.utils import override_settings

from bench.cleanup import drop_workspace
from ingest import selectors as ingest_selectors
from ingest.actions.embeddings import do_ensure_vector_index
from ingest.actions.vector_indexes import do_create_workspace_vector_index
from ingest.embeddings import configured_model_id
from ingest.models import Document, Source
from knowledge.actions.embeddings import do_ensure_entity_vector_index
from knowledge.actions.schema import do_ensure_default_schema
from knowledge.hooks import maintain_vector_indexes
from knowledge.models import EntityType
from knowledge.retrieval.limits import ENTITY_LIMIT
from knowledge.retrieval.signals import vector as vector_module
from knowledge.retrieval.types import QueryVector
from knowledge.selectors import matching as matching_module
from workspaces.actions.workspaces import do_create_workspace
from workspaces.models import Workspace

DIM = 384
WORKSPACES = 50
TOPICS = 1000
# The large tenants' shares of the chunks (and of the entity names); the other 45
# workspaces share the rest, two measured small ones among them: SMALL (0.5% of the
# chunks, 5,000 of 1M) and TINY (0.1%). At 1M the planner read both exactly (b-tree and
# sort) and walked the HNSW index for MEDIUM (2%).
LARGE_SHARES = [0.60, 0.20, 0.08, 0.04, 0.02]
SMALL_SHARES = {"chunks": (0.005, 0.001), "entities": (0.0025, 0.0005)}
BIG, LARGE, MEDIUM, SMALL, TINY = 0, 2, 4, 5, 6
MEASURED = (
    ("tiny", TINY), ("small", SMALL), ("medium", MEDIUM), ("large", LARGE), ("big", BIG)
)  # fmt: skip
# Text embeddings are clustered at several levels. Here: a shared pool of topics; each
# workspace's take on a topic (cosine SUBTOPIC_COS to it, so workspaces writing about the
# same topic crowd each other); documents about one take (DOC_COS) of ~10 chunks each
# (CHUNK_COS); a question about a document (QUERY_COS) finds its chunks at ~0.68, the
# take's other chunks at ~0.44, other workspaces' on the topic at ~0.4, other topics at ~0.
# Entity names sit around the takes (ENTITY_COS), as do the questions for them.
SUBTOPIC_COS = 0.95
DOC_COS = 0.8
CHUNK_COS = 0.85
QUERY_COS = 0.8
CHUNKS_PER_DOC = 10
ENTITY_COS = 0.7


def model_id() -> str:
    return configured_model_id() or "bench-model"


# --- synthetic data ----------------------------------------------------------------------


def _normalised(a: np.ndarray) -> np.ndarray:
    return (a / np.linalg.norm(a, axis=-1, keepdims=True)).astype(np.float32)


def _perturbed(base: np.ndarray, cos: float, rng: np.random.Generator) -> np.ndarray:
    """Unit vectors at about `cos` from the (unit) rows of `base`: in 384-d a Gaussian
    noise is nearly orthogonal to the base, so its norm sets the angle."""
    r = (1.0 / cos**2 - 1.0) ** 0.5
    noise = rng.standard_normal(base.shape, dtype=np.float32) * np.float32(r / DIM**0.5)
    return _normalised(base + noise)


def sizes(total: int, shares: tuple[float, float], rng: np.random.Generator) -> list[int]:
    """Rows per workspace: the large tenants, the two measured small ones, 43 others."""
    large = [round(total * s) for s in LARGE_SHARES]
    small = [round(total * s) for s in shares]
    rest = total - sum(large) - sum(small)
    weights = rng.uniform(0.25, 1.75, WORKSPACES - len(large) - len(small))
    others = [int(w) for w in np.floor(weights / weights.sum() * rest)]
    others[0] += rest - sum(others)
    return [*large, *small, *others]


@dataclass
class World:
    """Topics, each workspace's topics, its take on each and its documents (the centres
    rows are drawn around), all from the seed: a reused database gets the same queries."""

    seed: int
    chunk_sizes: list[int]
    entity_sizes: list[int]
    topics: list[np.ndarray]  # per workspace: its topic numbers
    centres: np.ndarray  # (pairs, DIM): one per (workspace, topic)
    pair: dict[tuple[int, int], int]
    doc_start: np.ndarray  # per workspace: the index of its first document
    doc_topic: np.ndarray  # per document
    doc_centres: np.ndarray  # (documents, DIM)


def world(*, chunks: int, entities: int, seed: int) -> World:
    rng = np.random.default_rng([seed, 1])
    mean = _normalised(rng.standard_normal(DIM))
    topic_vectors = _normalised(0.35 * DIM**0.5 * mean + rng.standard_normal((TOPICS, DIM)))
    chunk_sizes = sizes(chunks, SMALL_SHARES["chunks"], rng)
    entity_sizes = sizes(entities, SMALL_SHARES["entities"], rng)
    topics = []
    for w, n in enumerate(chunk_sizes):
        count = TOPICS if w == BIG else min(TOPICS, max(5, n // 100))
        topics.append(np.sort(rng.choice(TOPICS, count, replace=False)))
    pairs = [(w, int(t)) for w in range(WORKSPACES) for t in topics[w]]
    bases = np.stack([topic_vectors[t] for _, t in pairs])
    centres = _perturbed(bases, SUBTOPIC_COS, rng)
    pair = {p: i for i, p in enumerate(pairs)}
    counts = [max(1, round(n / CHUNKS_PER_DOC)) for n in chunk_sizes]
    doc_start = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    doc_topic = np.concatenate([rng.choice(topics[w], n) for w, n in enumerate(counts)])
    doc_ws = np.repeat(np.arange(WORKSPACES), counts)
    take = np.array([pair[(int(a), int(b))] for a, b in zip(doc_ws, doc_topic, strict=True)])
    doc_centres = _perturbed(centres[take], DOC_COS, rng)
    return World(
        seed, chunk_sizes, entity_sizes, topics, centres, pair, doc_start, doc_topic,
        doc_centres,
    )  # fmt: skip


def rows(
    w: World, sizes_: list[int], salt: int, *, documents: bool
) -> Iterator[tuple[np.ndarray, ...]]:
    """(workspace index, topic, vector) batches of every row, workspaces interleaved as a
    shared server receives them: chunks around their documents, names around the takes."""
    rng = np.random.default_rng([w.seed, salt])
    ws = np.concatenate([np.full(n, i, dtype=np.int32) for i, n in enumerate(sizes_)])
    order = rng.permutation(len(ws))
    ws = ws[order]
    if documents:
        counts = np.diff(np.append(w.doc_start, len(w.doc_topic)))
        base = w.doc_start[ws] + (rng.random(len(ws)) * counts[ws]).astype(np.int64)
        topic = w.doc_topic[base].astype(np.int32)
        centres, cos = w.doc_centres, CHUNK_COS
    else:
        topic = np.concatenate(
            [rng.choice(w.topics[i], n).astype(np.int32) for i, n in enumerate(sizes_)]
        )[order]
        base = np.array([w.pair[(int(a), int(b))] for a, b in zip(ws, topic, strict=True)])
        centres, cos = w.centres, ENTITY_COS
    for start in range(0, len(ws), 50_000):
        part = slice(start, start + 50_000)
        yield ws[part], topic[part], _perturbed(centres[base[part]], cos, rng)


_ROW = np.dtype(
    [("fields", ">i2"), ("l1", ">i4"), ("n", ">i8"), ("l2", ">i4"), ("ws", ">i4"),
     ("l3", ">i4"), ("topic", ">i4"), ("l4", ">i4"), ("dim", ">i2"), ("unused", ">i2"),
     ("v", ">f4", (DIM,))]
)  # fmt: skip


def copy_stage(w: World, sizes_: list[int], salt: int, *, documents: bool) -> None:
    """bench_vr_stage (n, ws index, topic, vector) by binary COPY: the vectors never go
    through text."""
    raw = connection.connection
    with raw.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_vr_stage")
        cursor.execute(
            f"CREATE UNLOGGED TABLE bench_vr_stage (n bigint, ws int, topic int, emb vector({DIM}))"
        )
        n = 0
        with cursor.copy("COPY bench_vr_stage FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0))
            for ws, topic, vectors in rows(w, sizes_, salt, documents=documents):
                block = np.zeros(len(ws), dtype=_ROW)
                block["fields"], block["l1"], block["l2"], block["l3"] = 4, 8, 4, 4
                block["l4"], block["dim"] = 4 + 4 * DIM, DIM
                block["n"] = np.arange(n, n + len(ws))
                block["ws"], block["topic"], block["v"] = ws, topic, vectors
                copy.write(block.tobytes())
                n += len(ws)
            copy.write(struct.pack(">h", -1))
    raw.commit()


def slug(seed: int, i: int) -> str:
    return f"vr{seed}-{i:02d}"


def bench_workspaces(seed: int) -> list[Workspace]:
    by_slug = {ws.slug: ws for ws in Workspace.objects.filter(slug__startswith=f"vr{seed}-")}
    return [by_slug[slug(seed, i)] for i in range(WORKSPACES) if slug(seed, i) in by_slug]


def loaded(w: World, spaces: list[Workspace]) -> bool:
    if len(spaces) != WORKSPACES:
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM ingest_chunk WHERE workspace_id = ANY(%s)",
            [[ws.pk for ws in spaces]],
        )
        chunks = cursor.fetchone()[0]
        cursor.execute(
            "SELECT count(*) FROM knowledge_entity WHERE workspace_id = ANY(%s)",
            [[ws.pk for ws in spaces]],
        )
        entities = cursor.fetchone()[0]
    return chunks == sum(w.chunk_sizes) and entities == sum(w.entity_sizes)


def drop(spaces: list[Workspace]) -> None:
    for ws in spaces:
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM ingest_chunk WHERE workspace_id = %s", [ws.pk])
        drop_workspace(ws)


def load(w: World) -> list[Workspace]:
    """The 50 workspaces, each with one document holding its chunks; the HNSW indexes
    dropped for the load and built again after it, as the app defines them."""
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS chunk_embedding_hnsw_{DIM}")
        cursor.execute(f"DROP INDEX IF EXISTS entity_embedding_hnsw_{DIM}")
    drop(bench_workspaces(w.seed))
    spaces = []
    for i in range(WORKSPACES):
        ws = do_create_workspace(slug=slug(w.seed, i), name=f"Vector recall {i}")
        do_ensure_default_schema(workspace=ws)
        source = Source.objects.create(workspace=ws, kind="upload", name="bench", status="done")
        Document.objects.create(workspace=ws, source=source, path="bench.txt", status="done")
        spaces.append(ws)
    ids = [ws.pk for ws in spaces]
    model = model_id()
    started = time.perf_counter()
    copy_stage(w, w.chunk_sizes, 2, documents=True)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO ingest_chunk (workspace_id, document_id, ordinal, text, char_start,
                char_end, token_count, heading_path, content_hash, embedding, embedding_model,
                embedding_dim, retrieved_count, boilerplate, created_at)
            SELECT d.workspace_id, d.id, s.n, 'chunk ' || s.n || ' topic ' || s.topic, 0, 20,
                   4, '[]', md5(s.n::text), s.emb, %s, {DIM}, 0, false, now()
            FROM bench_vr_stage s
            JOIN ingest_document d ON d.workspace_id = (%s::bigint[])[s.ws + 1]
            """,  # noqa: S608 (the dimension is ours)
            [model, ids],
        )
    print(f"chunks loaded in {time.perf_counter() - started:.0f} s", flush=True)
    copy_stage(w, w.entity_sizes, 3, documents=False)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO knowledge_entity (
                workspace_id, name, canonical_name, type_id, type_votes, type_curated,
                retrieved_count, description, summary, summary_hash, aliases, embedding,
                embedding_model, embedding_dim, mention_count, source_ids, properties, state,
                blocking_keys, curated, degree, created_at, updated_at)
            SELECT t.workspace_id, 'Entity ' || s.n, 'entity ' || s.n,
                   t.ids[1 + s.topic %% cardinality(t.ids)], '{{}}', false, 0, '', '', '',
                   '[]', s.emb, %s, {DIM}, 1, '{{}}', '{{}}', 'active', '{{}}', false, 0,
                   now(), now()
            FROM bench_vr_stage s
            JOIN (SELECT workspace_id, array_agg(id ORDER BY name) AS ids
                  FROM knowledge_entitytype GROUP BY workspace_id) t
              ON t.workspace_id = (%s::bigint[])[s.ws + 1]
            """,  # noqa: S608 (the dimension is ours)
            [model, ids],
        )
        cursor.execute("DROP TABLE bench_vr_stage")
    print(f"chunks and entities loaded in {time.perf_counter() - started:.0f} s", flush=True)
    build_indexes()
    with connection.cursor() as cursor:
        for table in ("ingest_chunk", "knowledge_entity"):
            cursor.execute(f"VACUUM ANALYZE {table}")
    return spaces


def build_indexes() -> None:
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '3GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        do_ensure_entity_vector_index(dimension=DIM)
        print(f"entity index built in {time.perf_counter() - started:.0f} s", flush=True)
        do_ensure_vector_index(dimension=DIM)
        print(f"chunk index built in {time.perf_counter() - started:.0f} s", flush=True)
        cursor.execute("RESET maintenance_work_mem")
        cursor.execute("RESET max_parallel_maintenance_workers")


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Vector recall benchmark; see bench/vector_recall.py."
    )
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--entities", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reuse", action="store_true", help="keep loaded data of the same size")
    parser.add_argument("--load-only", action="store_true")
    parser.add_argument("--drop", action="store_true", help="delete the bench data afterwards")
    parser.add_argument("--baseline", type=Path, help="a checkout whose functions to compare")
    parser.add_argument("--variants", action="store_true", help="also the raw index settings")
    parser.add_argument("--json", type=Path, help="write the results here too")
    parser.add_argument(
        "--parts",
        nargs="*",
        default=["chunks", "entities", "names"],
        choices=["chunks", "entities", "names"],
        help="which searches to measure (two runs may share the work)",
    )
    parser.add_argument(
        "--partial-indexes",
        action="store_true",
        help="also measure chunk search with an HNSW index of each measured workspace's own",
    )
    parser.add_argument(
        "--workspace-indexes",
        action="store_true",
        help="also measure chunk search after the app's vector_indexes upkeep job ran",
    )
    parser.add_argument(
        "--ef-construction",
        type=int,
        nargs="+",
        help="also build the medium and large workspaces' own chunk index with each of these "
        "ef_construction values and measure the app's chunk search on it",
    )
    args = parser.parse_args()
    w = world(chunks=args.chunks, entities=args.entities, seed=args.seed)
    spaces = bench_workspaces(args.seed)
    if not (args.reuse and loaded(w, spaces)):
        spaces = load(w)
    else:
        build_indexes()
    if not args.load_only:
        measure(w, spaces, args)
    if args.drop:
        drop(spaces)


# --- queries -----------------------------------------------------------------------------


@dataclass
class Query:
    workspace: Workspace
    kind: str  # "own" or "foreign" topics
    vector: list[float]
    type_id: int  # entity matching: the type of the topic's names


def queries(
    w: World, spaces: list[Workspace], count: int, salt: int, *, documents: bool
) -> dict[str, list[Query]]:
    """New points of the workspace's own topics ("own": about one of its documents, or
    around its take on a topic for names) and, but for the big tenant, of the big tenant's
    topics it has nothing about ("foreign"), `count` of each."""
    rng = np.random.default_rng([w.seed, salt])
    out: dict[str, list[Query]] = {}
    for label, index in MEASURED:
        types = list(
            EntityType.objects.filter(workspace=spaces[index])
            .order_by("name")
            .values_list("pk", flat=True)
        )
        kinds = [("own", index, w.topics[index])]
        if index != BIG:
            kinds.append(("foreign", BIG, np.setdiff1d(w.topics[BIG], w.topics[index])))
        for kind, owner, topics in kinds:
            if documents:
                first = w.doc_start[owner]
                last = w.doc_start[owner + 1] if owner + 1 < WORKSPACES else len(w.doc_topic)
                docs = np.arange(first, last)
                docs = docs[np.isin(w.doc_topic[docs], topics)]
                picked = rng.choice(docs, count)
                picked_topics = w.doc_topic[picked]
                vectors = _perturbed(w.doc_centres[picked], QUERY_COS, rng)
            else:
                picked_topics = rng.choice(topics, count)
                bases = np.stack([w.centres[w.pair[(owner, int(t))]] for t in picked_topics])
                vectors = _perturbed(bases, ENTITY_COS, rng)
            out[f"{label} {kind}"] = [
                Query(spaces[index], kind, v.tolist(), types[int(t) % len(types)])
                for v, t in zip(vectors, picked_topics, strict=True)
            ]
    return out


def name_queries(spaces: list[Workspace], count: int, seed: int) -> dict[str, list[Query]]:
    """Consolidation's case: a new name close (cosine ~0.9) to a name the workspace has,
    of the same type; the nearest must be found for review."""
    rng = np.random.default_rng([seed, 9])
    out: dict[str, list[Query]] = {}
    for label, index in MEASURED:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT type_id, embedding::text FROM knowledge_entity WHERE workspace_id = %s "
                "ORDER BY md5(id::text) LIMIT %s",
                [spaces[index].pk, count],
            )
            picked = cursor.fetchall()
        bases = _normalised(np.array([json.loads(v) for _, v in picked], dtype=np.float32))
        vectors = _perturbed(bases, 0.9, rng)
        out[f"{label} names"] = [
            Query(spaces[index], "name", v.tolist(), type_id)
            for v, (type_id, _) in zip(vectors, picked, strict=True)
        ]
    return out


# --- what is measured --------------------------------------------------------------------


def _literal(vector: list[float]) -> str:
    return "[" + ",".join(repr(float(v)) for v in vector) + "]"


def raw_search(
    table: str, q: Query, k: int, *, settings_: dict[str, str], exact: bool, typed: bool = False
) -> list[tuple[int, float]]:
    """The app's filtered nearest-neighbour SQL under index settings (or exactly: the
    ORDER BY on the bare column, which the expression index cannot serve), re-sorted."""
    alias = "c" if table == "ingest_chunk" else "e"
    column = f"{alias}.embedding" if exact else f"({alias}.embedding::vector({DIM}))"
    where = (
        f"{alias}.embedding_dim = {DIM} AND {alias}.workspace_id = %s "
        f"AND {alias}.embedding_model = %s"
    )
    where += " AND NOT c.boilerplate" if table == "ingest_chunk" else " AND e.state = 'active'"
    params: list[Any] = [_literal(q.vector), q.workspace.pk, model_id()]
    if typed:
        where += " AND e.type_id = %s"
        params.append(q.type_id)
    sql = (
        f"WITH r AS MATERIALIZED (SELECT {alias}.id, {column} <=> %s::vector({DIM}) AS d "  # noqa: S608
        f"FROM {table} {alias} WHERE {where} ORDER BY d LIMIT %s) "
        "SELECT id, d FROM r ORDER BY d + 0, id"
    )
    params.append(k)
    with transaction.atomic(), connection.cursor() as cursor:
        for name, value in settings_.items():
            cursor.execute("SELECT set_config(%s, %s, true)", [name, value])
        cursor.execute(sql, params)
        return [(r[0], r[1]) for r in cursor.fetchall()]


def raw_variant(
    table: str, k: int, config: dict[str, str], *, typed: bool = False, review: float = -1.0
) -> Callable[[Query], list[int]]:
    """`raw_search` under index settings, as ids (similar enough to `review`)."""

    def search(q: Query) -> list[int]:
        rows = raw_search(table, q, k, settings_=config, exact=False, typed=typed)
        return [i for i, d in rows if 1 - d >= review]

    return search


def load_module(root: Path, relative: str, name: str) -> ModuleType:
    """A module of another checkout, run against this one's database and models."""
    spec = importlib.util.spec_from_file_location(name, root / relative)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def app_search(module: ModuleType, k: int, part: int) -> Callable[[Query], list[int]]:
    """`vector_signals` of a checkout: its chunk ids (part 0) or entity ids (part 1)."""

    def search(q: Query) -> list[int]:
        found = module.vector_signals(
            q.workspace.pk, QueryVector(model=model_id(), values=q.vector), k, None, None
        )
        return [i for i, _ in found[part]]

    return search


def app_match(module: ModuleType) -> Callable[[Query], list[int]]:
    """`nearest_by_embedding` of a checkout: [entity id] or []."""

    def match(q: Query) -> list[int]:
        entity_type = EntityType.objects.get(pk=q.type_id)
        found = module.nearest_by_embedding(q.workspace, entity_type, q.vector, model=model_id())
        return [found[0].pk] if found else []

    return match


def recall(found: list[int], exact: list[int], k: int) -> float:
    want = exact[:k]
    return len(set(found[:k]) & set(want)) / len(want) if want else 1.0


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = call()
    return result, (time.perf_counter() - started) * 1000


def run_set(
    qs: list[Query],
    variants: dict[str, Callable[[Query], Any]],
    truth: Callable[[Query], Any],
    score: Callable[[Any, Any], dict[str, float]],
) -> dict[str, dict[str, float]]:
    """Every variant on every query, interleaved (the order rotates per query), scored
    against the exact answer; means of the scores, p50/p95 of the latency."""
    names = list(variants)
    scores: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    times: dict[str, list[float]] = {n: [] for n in [*names, "exact"]}
    calls = {**variants, "exact": truth}
    order = list(calls)
    for i, q in enumerate(qs):
        found: dict[str, Any] = {}
        for n in order[i % len(order) :] + order[: i % len(order)]:
            found[n], ms = timed(partial(calls[n], q))
            times[n].append(ms)
        for n in names:
            scores[n].append(score(found[n], found["exact"]))
    out: dict[str, dict[str, float]] = {}
    for n in [*names, "exact"]:
        row: dict[str, float] = {}
        for key in scores[n][0] if scores.get(n) else []:
            row[key] = round(statistics.fmean(s[key] for s in scores[n]), 3)
        row["p50 ms"] = round(statistics.median(times[n]), 1)
        row["p95 ms"] = round(percentile(times[n], 0.95), 1)
        out[n] = row
    return out


# The app's own setting before issue 20 (what the baseline checkout runs) is
# relaxed_order with the default max_scan_tuples (20k) and ef_search (40).
RELAXED = {"hnsw.iterative_scan": "relaxed_order"}
INDEX_SETTINGS: dict[str, dict[str, str]] = {
    "hnsw, ef_search 40, no iterative scan": {"hnsw.iterative_scan": "off"},
    "strict_order (max_scan_tuples 20k)": {"hnsw.iterative_scan": "strict_order"},
    "relaxed_order, ef_search 100": {
        "hnsw.iterative_scan": "relaxed_order",
        "hnsw.ef_search": "100",
    },
    "relaxed_order, max_scan_tuples 100k": {
        "hnsw.iterative_scan": "relaxed_order",
        "hnsw.max_scan_tuples": "100000",
    },
}


def measure(w: World, spaces: list[Workspace], args: argparse.Namespace) -> None:
    k = settings.RETRIEVAL_CANDIDATES
    entity_k = min(k, ENTITY_LIMIT)
    review = settings.CONSOLIDATION_EMBEDDING_REVIEW
    checkouts = {"app": (vector_module, matching_module)}
    if args.baseline:
        checkouts["baseline"] = (
            load_module(
                args.baseline, "knowledge/retrieval/signals/vector.py", "bench_base_vector"
            ),
            load_module(args.baseline, "knowledge/selectors/matching.py", "bench_base_matching"),
        )
    results: dict[str, Any] = {"chunks": {}, "entities": {}, "names": {}}

    def chunk_score(found: list[int], exact: list[tuple[int, float]]) -> dict[str, float]:
        ids = [i for i, _ in exact]
        return {"recall@10": recall(found, ids, 10), f"recall@{k}": recall(found, ids, k),
                "rows": len(found)}  # fmt: skip

    def name_score(found: list[int], exact: list[tuple[int, float]]) -> dict[str, float]:
        want = [i for i, d in exact if 1 - d >= review]
        return {"recall@1": 1.0 if found == want else 0.0, "exact found": float(bool(want))}

    for label, qs in queries(w, spaces, args.queries, 5, documents=True).items():
        if "chunks" not in args.parts:
            break
        variants: dict[str, Callable[[Query], Any]] = {
            f"{name}: vector_signals": app_search(v, k, 0) for name, (v, _) in checkouts.items()
        }
        if args.variants:
            for name, config in INDEX_SETTINGS.items():
                variants[name] = raw_variant("ingest_chunk", k, config)
        results["chunks"][label] = run_set(
            qs, variants,
            lambda q: raw_search("ingest_chunk", q, k, settings_={}, exact=True),
            chunk_score,
        )  # fmt: skip
        report("chunks", label, results["chunks"][label])
    for label, qs in queries(w, spaces, args.queries, 6, documents=False).items():
        if "entities" not in args.parts:
            break
        variants = {
            f"{name}: vector_signals": app_search(v, k, 1) for name, (v, _) in checkouts.items()
        }
        if args.variants:
            for name, config in INDEX_SETTINGS.items():
                variants[name] = raw_variant("knowledge_entity", entity_k, config)
        results["entities"][label] = run_set(
            qs, variants,
            lambda q: raw_search("knowledge_entity", q, entity_k, settings_={}, exact=True),
            chunk_score,
        )  # fmt: skip
        report("entities", label, results["entities"][label])
    for label, qs in name_queries(spaces, args.queries, w.seed).items():
        if "names" not in args.parts:
            break
        variants = {
            f"{name}: nearest_by_embedding": app_match(m) for name, (_, m) in checkouts.items()
        }
        if args.variants:
            for name, config in INDEX_SETTINGS.items():
                variants[name] = raw_variant(
                    "knowledge_entity", 1, config, typed=True, review=review
                )
        results["names"][label] = run_set(
            qs, variants,
            lambda q: raw_search("knowledge_entity", q, 1, settings_={}, exact=True, typed=True),
            name_score,
        )  # fmt: skip
        report("names", label, results["names"][label])
    if args.partial_indexes:
        results["chunks, per-workspace partial index"] = partial_index_pass(
            w, spaces, args, checkouts, k, chunk_score
        )
    if args.ef_construction:
        results["chunks, own index by ef_construction"] = ef_construction_pass(
            w, spaces, args, k, chunk_score
        )
    if args.workspace_indexes:
        results["workspace indexes of the app"] = workspace_index_pass(
            w, spaces, args, checkouts, k, {"chunks": chunk_score, "names": name_score}
        )
    results["sizes"] = {
        what: {"total": sum(n), **{label: n[index] for label, index in MEASURED}}
        for what, n in (("chunks", w.chunk_sizes), ("entities", w.entity_sizes))
    }
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


def partial_index_pass(
    w: World,
    spaces: list[Workspace],
    args: argparse.Namespace,
    checkouts: dict[str, tuple[ModuleType, ModuleType]],
    k: int,
    score: Callable[[Any, Any], dict[str, float]],
) -> dict[str, Any]:
    """The other fix the issue names: a partial HNSW index per workspace (WHERE
    workspace_id = <id>), which the planner takes for that workspace's searches. Built for
    the measured workspaces but the big one, measured, dropped again."""
    out: dict[str, Any] = {}
    names = []
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        for _, index in MEASURED:
            if index == BIG:
                continue
            name = f"bench_vr_partial_{index}"
            cursor.execute(
                f"CREATE INDEX IF NOT EXISTS {name} ON ingest_chunk USING hnsw "
                f"((embedding::vector({DIM})) vector_cosine_ops) "
                f"WHERE embedding_dim = {DIM} AND workspace_id = {int(spaces[index].pk)}"
            )
            names.append(name)
        cursor.execute("RESET maintenance_work_mem")
    print(f"\npartial indexes built in {time.perf_counter() - started:.0f} s", flush=True)
    with measured_indexes(names):
        for label, qs in queries(w, spaces, args.queries, 5, documents=True).items():
            if label.startswith("big"):
                continue
            variants: dict[str, Callable[[Query], Any]] = {
                f"{name} + partial index: vector_signals": app_search(v, k, 0)
                for name, (v, _) in checkouts.items()
            }
            variants["relaxed_order + partial index"] = raw_variant("ingest_chunk", k, RELAXED)
            for ef in (100, 400, 600, 800):
                variants[f"relaxed_order, ef_search {ef} + partial index"] = raw_variant(
                    "ingest_chunk", k, {**RELAXED, "hnsw.ef_search": str(ef)}
                )
            out[label] = run_set(
                qs, variants,
                lambda q: raw_search("ingest_chunk", q, k, settings_={}, exact=True),
                score,
            )  # fmt: skip
            report("chunks, per-workspace partial index", label, out[label])
    return out


def workspace_index_pass(
    w: World,
    spaces: list[Workspace],
    args: argparse.Namespace,
    checkouts: dict[str, tuple[ModuleType, ModuleType]],
    k: int,
    scores: dict[str, Callable[[Any, Any], dict[str, float]]],
) -> dict[str, Any]:
    """The indexes the app builds itself: its `vector_indexes` upkeep job (a workspace
    above VECTOR_EXACT_MAX_ROWS chunks / active names and at most
    VECTOR_WORKSPACE_INDEX_MAX_SHARE of them), then the searches of `--parts` of every
    checkout on them; dropped again afterwards."""
    out: dict[str, Any] = {}
    started = time.perf_counter()
    outcome = maintain_vector_indexes()
    built = list(outcome.details.get("built", []))
    print(f"\n{outcome.message} in {time.perf_counter() - started:.0f} s: {built}", flush=True)
    out["built"] = built
    out["build seconds"] = round(time.perf_counter() - started, 1)
    with measured_indexes(built):
        for part, label, result in _workspace_index_sets(w, spaces, args, checkouts, k, scores):
            out.setdefault(part, {})[label] = result
            report(f"{part}, workspace indexes of the app", label, result)
    return out


@contextmanager
def measured_indexes(names: list[str]) -> Iterator[None]:
    """Indexes just built for a pass: analysed and made known to the app (its cache of the
    catalog cleared) before the pass, dropped after it whatever happens."""
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE ingest_chunk")
        cursor.execute("ANALYZE knowledge_entity")
    ingest_selectors._own_indexes.clear()
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            for name in names:
                cursor.execute(f"DROP INDEX IF EXISTS {name}")
        ingest_selectors._own_indexes.clear()


def ef_construction_pass(
    w: World,
    spaces: list[Workspace],
    args: argparse.Namespace,
    k: int,
    score: Callable[[Any, Any], dict[str, float]],
) -> dict[str, Any]:
    """The medium and the large workspace's own chunk index as the app builds it
    (`do_create_workspace_vector_index`), once per `--ef-construction` value, one workspace
    at a time, with the app's chunk search (`vector_signals`, its own ef_search) on own and
    foreign questions; each index is dropped after it was measured."""
    out: dict[str, Any] = {}
    by_label = queries(w, spaces, args.queries, 5, documents=True)
    search = app_search(vector_module, k, 0)
    for label, index in (("medium", MEDIUM), ("large", LARGE)):
        workspace = spaces[index]
        for value in args.ef_construction:
            started = time.perf_counter()
            with override_settings(VECTOR_WORKSPACE_INDEX_EF_CONSTRUCTION=value):
                name = do_create_workspace_vector_index(workspace_id=workspace.pk, dimension=DIM)
            built = round(time.perf_counter() - started, 1)
            with measured_indexes([name]):
                for kind in ("own", "foreign"):
                    qs = by_label[f"{label} {kind}"]
                    result = run_set(
                        qs,
                        {f"ef_construction {value}: vector_signals": search},
                        partial(_exact, "ingest_chunk", k),
                        score,
                    )
                    result["build seconds"] = {"s": built}
                    out.setdefault(f"{label} {kind}", {})[str(value)] = result
                    report(f"chunks, own index, ef_construction {value}", f"{label} {kind}", result)
    return out


def _workspace_index_sets(
    w: World,
    spaces: list[Workspace],
    args: argparse.Namespace,
    checkouts: dict[str, tuple[ModuleType, ModuleType]],
    k: int,
    scores: dict[str, Callable[[Any, Any], dict[str, float]]],
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    entity_k = min(k, ENTITY_LIMIT)
    sets: list[tuple[str, str, dict[str, list[Query]], int]] = []
    if "chunks" in args.parts:
        sets.append(
            ("chunks", "ingest_chunk", queries(w, spaces, args.queries, 5, documents=True), k)
        )
    if "entities" in args.parts:
        sets.append(
            (
                "entities",
                "knowledge_entity",
                queries(w, spaces, args.queries, 6, documents=False),
                entity_k,
            )
        )
    for part, table, by_label, limit in sets:
        for label, qs in by_label.items():
            variants: dict[str, Callable[[Query], Any]] = {
                f"{name} + workspace indexes: vector_signals": app_search(
                    v, k, 0 if part == "chunks" else 1
                )
                for name, (v, _) in checkouts.items()
            }
            for ef in (100, 600):
                variants[f"relaxed_order, ef_search {ef}"] = raw_variant(
                    table, limit, {**RELAXED, "hnsw.ef_search": str(ef)}
                )
            yield part, label, run_set(
                qs, variants, partial(_exact, table, limit), scores["chunks"]
            )  # fmt: skip
    if "names" in args.parts:
        for label, qs in name_queries(spaces, args.queries, w.seed).items():
            matches: dict[str, Callable[[Query], Any]] = {
                f"{name} + workspace indexes: nearest_by_embedding": app_match(m)
                for name, (_, m) in checkouts.items()
            }
            yield "names", label, run_set(
                qs, matches, partial(_exact, "knowledge_entity", 1, typed=True), scores["names"]
            )  # fmt: skip


def _exact(table: str, limit: int, q: Query, *, typed: bool = False) -> list[tuple[int, float]]:
    return raw_search(table, q, limit, settings_={}, exact=True, typed=typed)


def report(what: str, label: str, rows: dict[str, dict[str, float]]) -> None:
    print(f"\n{what}, {label} workspace queries", flush=True)
    for name, row in rows.items():
        cells = "  ".join(f"{key} {value}" for key, value in row.items())
        print(f"  {name:<48} {cells}", flush=True)
