"""The Neo4j 5 graph backend: a projection of each workspace's active graph, read with Cypher.

Postgres stays the system of record. This backend keeps a copy of the active entities and
relations that the write path updates after each commit (knowledge/graph/sync.py) and
`manage.py sync_graph` rebuilds from scratch, and answers traversals from it alone. The
projection is deliberately small:

    (:Entity {id, workspace_id, name, type, mention_count, community})
        -[:REL {id, workspace_id, type, weight}]->(:Entity)

One relationship type with the relation type as a property: the relation-type filters are
then ordinary parameters (a Neo4j relationship type per relation type would put user text
into query text and need a schema entry per type). Ids are Postgres primary keys, unique
across workspaces; every query still filters on `workspace_id`, so no answer can leave its
workspace whatever ids it is given.

Why level-by-level expansion for neighbourhoods rather than one variable-length pattern:
`(s)-[:REL*1..3]-(n)` enumerates paths, which grow with the product of the degrees along
them (three hops through a few hubs can be millions of paths to a few thousand nodes), while one
`UNWIND frontier ... MATCH (a)-[r]-(b) RETURN DISTINCT b` per hop touches each edge of the
frontier once, gives every node its shortest depth by construction, and lets us stop
expanding as soon as the limit is reached — a limit that bounds the work done. All hops run
in one read transaction, so they see one state of the graph.

Writes are idempotent (MERGE, SET, DELETE by id), batched with UNWIND, and run through
`session.execute_write`, which retries transient errors (deadlocks, leader changes) and lost
connections for RETRY_TIME seconds; on top of that a batch whose server went away
(ServiceUnavailable, SessionExpired, a commit whose outcome is unknown) or that kept hitting
transient errors is tried again RETRIES times, which is safe because it is idempotent. The
defaults are short on purpose: writes run after the user's commit, in their request, so a
server that is down costs each change about RETRIES + 1 seconds, not the driver's 30.

The driver is created on first use, never at import or construction, one per backend
instance (the driver is thread-safe and pools its connections; sessions are per call).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict
from itertools import batched
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from django.core.exceptions import ImproperlyConfigured
from neo4j import Driver, GraphDatabase, ManagedTransaction, Session, unit_of_work
from neo4j.exceptions import (
    AuthError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
    UnsupportedServerProduct,
)

from knowledge.graph.base import (
    DIRECTIONS,
    Direction,
    EntityRow,
    GraphBackend,
    GraphBackendError,
    GraphEdge,
    GraphNode,
    GraphResult,
    GraphStats,
    PathResult,
    RelationRow,
    build_stats,
    check_neighborhood_args,
)

T = TypeVar("T")

# --- Query text -----------------------------------------------------------------------------
# Constants and pure builders, so the text can be read (and unit-tested) in one place. Only
# validated integers and fixed fragments are ever put into query text; values travel as
# parameters.

SCHEMA_STATEMENTS: tuple[str, ...] = (
    # Also the index every lookup by id uses, and what makes concurrent MERGEs safe.
    "CREATE CONSTRAINT graphloom_entity_id IF NOT EXISTS FOR (e:Entity) REQUIRE e.id IS UNIQUE",
    "CREATE INDEX graphloom_entity_workspace IF NOT EXISTS FOR (e:Entity) ON (e.workspace_id)",
    "CREATE INDEX graphloom_entity_workspace_type IF NOT EXISTS "
    "FOR (e:Entity) ON (e.workspace_id, e.type)",
    "CREATE INDEX graphloom_rel_id IF NOT EXISTS FOR ()-[r:REL]-() ON (r.id)",
    "CREATE INDEX graphloom_rel_workspace IF NOT EXISTS FOR ()-[r:REL]-() ON (r.workspace_id)",
)

# Active relations touching `e`, both directions, a self-loop once (it is both outgoing and
# incoming, hence the subtraction). The two plain counts are answered from the degree store.
DEGREE = "COUNT { (e)-[:REL]->() } + COUNT { (e)<-[:REL]-() } - COUNT { (e)-[:REL]->(e) }"

NODE_COLUMNS = (
    "e.id AS id, coalesce(e.name, '') AS name, coalesce(e.type, '') AS type, "
    "coalesce(e.mention_count, 0) AS mention_count, e.community AS community"
)

UPSERT_ENTITIES = """
UNWIND $rows AS row
MERGE (e:Entity {id: row.id})
SET e.workspace_id = row.workspace_id, e.name = row.name, e.type = row.type,
    e.mention_count = row.mention_count, e.community = row.community
"""

# A merge re-points a relation at the survivor: the copy between the old endpoints goes
# first, or MERGE would keep both.
MOVE_RELATIONS = """
UNWIND $rows AS row
MATCH (s:Entity)-[r:REL {id: row.id}]->(t:Entity)
WHERE r.workspace_id = row.workspace_id AND (s.id <> row.source OR t.id <> row.target)
DELETE r
"""

# Endpoints missing from the projection are created bare (the contract); the write path
# always sends the endpoints' own rows too, so they are filled in the same sync.
UPSERT_RELATIONS = """
UNWIND $rows AS row
MERGE (s:Entity {id: row.source})
  ON CREATE SET s.workspace_id = row.workspace_id, s.mention_count = 0
MERGE (t:Entity {id: row.target})
  ON CREATE SET t.workspace_id = row.workspace_id, t.mention_count = 0
MERGE (s)-[r:REL {id: row.id}]->(t)
SET r.workspace_id = row.workspace_id, r.type = row.type, r.weight = row.weight
"""

DELETE_ENTITIES = """
UNWIND $ids AS id
MATCH (e:Entity {id: id})
WHERE e.workspace_id = $workspace_id
DETACH DELETE e
"""

DELETE_RELATIONS = """
UNWIND $ids AS id
MATCH ()-[r:REL {id: id}]->()
WHERE r.workspace_id = $workspace_id
DELETE r
"""

# Relationships first, then nodes, a batch per transaction: a hub's thousands of edges never
# ride along in one node batch's DETACH DELETE.
CLEAR_RELATIONS_BATCH = """
MATCH ()-[r:REL]->()
WHERE r.workspace_id = $workspace_id
WITH r LIMIT $batch
DELETE r
RETURN count(*) AS deleted
"""

CLEAR_ENTITIES_BATCH = """
MATCH (e:Entity)
WHERE e.workspace_id = $workspace_id
WITH e LIMIT $batch
DETACH DELETE e
RETURN count(*) AS deleted
"""

NODES_BY_ID = f"""
UNWIND $ids AS id
MATCH (e:Entity {{id: id}})
WHERE e.workspace_id = $workspace_id
RETURN {NODE_COLUMNS}, {DEGREE} AS degree
"""

# The `limit` best of one depth level: higher degree first, then lower id.
TOP_BY_DEGREE = f"""
UNWIND $ids AS id
MATCH (e:Entity {{id: id}})
WHERE e.workspace_id = $workspace_id
WITH e, {DEGREE} AS degree
ORDER BY degree DESC, e.id ASC
LIMIT $top
RETURN e.id AS id
"""

HUBS = f"""
MATCH (e:Entity)
WHERE e.workspace_id = $workspace_id AND ($entity_type IS NULL OR e.type = $entity_type)
WITH e, {DEGREE} AS degree
ORDER BY degree DESC, coalesce(e.mention_count, 0) DESC, e.id ASC
LIMIT $top
RETURN {NODE_COLUMNS}, degree
"""

STATS_ENTITY_TYPES = """
MATCH (e:Entity)
WHERE e.workspace_id = $workspace_id
RETURN coalesce(e.type, '') AS type, count(*) AS n
"""

STATS_RELATION_TYPES = """
MATCH ()-[r:REL]->()
WHERE r.workspace_id = $workspace_id
RETURN coalesce(r.type, '') AS type, count(*) AS n
"""

STATS_DEGREES = f"""
MATCH (e:Entity)
WHERE e.workspace_id = $workspace_id
WITH {DEGREE} AS degree
RETURN degree, count(*) AS n
"""

# The edge used for each hop of a found path: the smallest-id relation between the two
# nodes (either direction, of `$types` when typed), the rule the Postgres backend uses, so
# parallel edges give the same answer on both.
PATH_EDGES = """
UNWIND range(0, size($path_ids) - 2) AS hop
MATCH (a:Entity {id: $path_ids[hop]})-[r:REL]-(b:Entity {id: $path_ids[hop + 1]})
WHERE r.workspace_id = $workspace_id AND ($types IS NULL OR r.type IN $types)
WITH hop, min(r.id) AS first
MATCH (s:Entity)-[r:REL {id: first}]->(t:Entity)
WHERE r.workspace_id = $workspace_id
RETURN hop, r.id AS id, s.id AS source, t.id AS target, coalesce(r.type, '') AS type,
       coalesce(r.weight, 0.0) AS weight
ORDER BY hop
"""

HEALTH = "RETURN 1 AS ok"

# A neighbourhood returns at most limit * this many edges (lowest ids first) and says it was
# cut: as the Postgres backend does.
EDGES_PER_NODE = 10

_PATTERNS: dict[str, str] = {
    "out": "(a)-[r:REL]->(b:Entity)",
    "in": "(a)<-[r:REL]-(b:Entity)",
    "both": "(a)-[r:REL]-(b:Entity)",
}


def expand_query(direction: Direction, *, typed: bool) -> str:
    """One hop out of a frontier of ids: the distinct neighbours (id, type) reached along
    relations of `$types` (when `typed`) in `direction`, inside the workspace."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")
    type_filter = " AND r.type IN $types" if typed else ""
    return (
        "UNWIND $frontier AS fid\n"
        "MATCH (a:Entity {id: fid})\n"
        "WHERE a.workspace_id = $workspace_id\n"
        f"MATCH {_PATTERNS[direction]}\n"
        f"WHERE b.workspace_id = $workspace_id{type_filter}\n"
        "RETURN DISTINCT b.id AS id, b.type AS type"
    )


def edges_query(*, typed: bool, limited: bool = False) -> str:
    """The relations (of `$types` when `typed`) whose two ends are both in `$ids`, by id;
    at most `$max_edges` when `limited`."""
    type_filter = " AND r.type IN $types" if typed else ""
    return (
        "MATCH (a:Entity)-[r:REL]->(b:Entity)\n"
        "WHERE a.id IN $ids AND a.workspace_id = $workspace_id\n"
        f"  AND b.id IN $ids AND b.workspace_id = $workspace_id{type_filter}\n"
        "RETURN r.id AS id, a.id AS source, b.id AS target, coalesce(r.type, '') AS type, "
        "coalesce(r.weight, 0.0) AS weight\n"
        "ORDER BY r.id" + ("\nLIMIT $max_edges" if limited else "")
    )


def shortest_path_query(max_hops: int, *, typed: bool) -> str:
    """A shortest undirected path of 1..max_hops relations between `$source` and `$target`.

    Cypher takes no parameter for a variable-length bound, so the (validated) integer is
    part of the text; the relation predicate sits in `all(...)` over the path, the form
    Neo4j checks while it searches instead of filtering finished paths. The two ends are
    matched by separate clauses (one row each, by the unique id): the same rows as one
    comma-separated pattern, which Neo4j flags as a possible cartesian product."""
    hops = int(max_hops)
    if hops < 1:
        raise ValueError(f"max_hops must be at least 1, not {max_hops!r}")
    predicate = "r.workspace_id = $workspace_id" + (" AND r.type IN $types" if typed else "")
    return (
        "MATCH (a:Entity {id: $source})\n"
        "WHERE a.workspace_id = $workspace_id\n"
        "MATCH (b:Entity {id: $target})\n"
        "WHERE b.workspace_id = $workspace_id\n"
        f"MATCH p = shortestPath((a)-[:REL*..{hops}]-(b))\n"
        f"WHERE all(r IN relationships(p) WHERE {predicate})\n"
        "RETURN [n IN nodes(p) | n.id] AS node_ids"
    )


# The longest path bound the collector below renders: the API's and the agents' limit
# (knowledge/selectors/graph.py MAX_PATH_HOPS), which the statement check's test holds us to.
CHECKED_PATH_HOPS = 6

# Every parameter the backend sends with its statements; the statement check rejects any
# other `$name`, so a misspelt parameter fails `make test` rather than a query on a server.
PARAMETERS: tuple[str, ...] = (
    "batch",
    "entity_type",
    "frontier",
    "ids",
    "max_edges",
    "path_ids",
    "rows",
    "source",
    "target",
    "top",
    "types",
    "workspace_id",
)


def all_statements() -> list[tuple[str, str]]:
    """Every statement this backend can send, as (name, Cypher text), parameters left as
    `$name`: each constant once and each builder in every variant it can produce (the path
    builder for each hop bound up to CHECKED_PATH_HOPS). No server is needed: the text is
    checked with Neo4j's own Cypher language support (scripts/cypher_check.mjs, run by
    tests/knowledge/graph/test_cypher_statements.py), and no projection statement lives
    anywhere else (knowledge/graph/sync.py only calls the backend)."""
    # "CREATE CONSTRAINT|INDEX <name> ...": named after the constraint or index.
    statements = [(f"schema {text.split()[2]}", text) for text in SCHEMA_STATEMENTS]
    statements += [
        ("upsert entities", UPSERT_ENTITIES),
        ("move relations", MOVE_RELATIONS),
        ("upsert relations", UPSERT_RELATIONS),
        ("delete entities", DELETE_ENTITIES),
        ("delete relations", DELETE_RELATIONS),
        ("clear relations batch", CLEAR_RELATIONS_BATCH),
        ("clear entities batch", CLEAR_ENTITIES_BATCH),
        ("nodes by id", NODES_BY_ID),
        ("top by degree", TOP_BY_DEGREE),
        ("hubs", HUBS),
        ("stats entity types", STATS_ENTITY_TYPES),
        ("stats relation types", STATS_RELATION_TYPES),
        ("stats degrees", STATS_DEGREES),
        ("path edges", PATH_EDGES),
        ("health", HEALTH),
    ]
    for typed in (False, True):
        kind = "typed" if typed else "untyped"
        for direction in DIRECTIONS:
            statements.append((f"expand {direction} {kind}", expand_query(direction, typed=typed)))
        for limited in (False, True):
            label = f"edges {kind}" + (" limited" if limited else "")
            statements.append((label, edges_query(typed=typed, limited=limited)))
        for hops in range(1, CHECKED_PATH_HOPS + 1):
            statements.append(
                (f"shortest path {hops} hops {kind}", shortest_path_query(hops, typed=typed))
            )
    return statements


# --- The backend ----------------------------------------------------------------------------

# Server gone, connection lost, a commit whose outcome is unknown (IncompleteCommit is a
# ServiceUnavailable), a deadlock or leader change: worth another try of an idempotent write.
_UNAVAILABLE = (ServiceUnavailable, SessionExpired)
_RETRYABLE = (*_UNAVAILABLE, TransientError)
_DRIVER_ERRORS = (Neo4jError, DriverError, UnsupportedServerProduct)


def _option[V](options: dict[str, Any], name: str, cast: Callable[[Any], V], default: V) -> V:
    raw = options.get(name)
    if raw is None or raw == "":
        return default
    try:
        return cast(raw)
    except (TypeError, ValueError) as exc:
        raise ImproperlyConfigured(f"GRAPH_BACKENDS OPTIONS {name}: bad value {raw!r}") from exc


def _node(row: dict[str, Any], *, depth: int | None = None) -> GraphNode:
    return GraphNode(
        id=int(row["id"]),
        name=row["name"],
        type=row["type"],
        degree=int(row["degree"]),
        depth=depth,
        mention_count=int(row["mention_count"]),
        community=row["community"],
    )


def _edge(row: dict[str, Any]) -> GraphEdge:
    return GraphEdge(
        id=int(row["id"]),
        source=int(row["source"]),
        target=int(row["target"]),
        type=row["type"],
        weight=float(row["weight"]),
    )


class Neo4jGraphBackend(GraphBackend):
    """A Neo4j 5 projection. OPTIONS (all optional):

    URL (bolt://localhost:7687; neo4j:// for a cluster), USER (neo4j), PASSWORD, DATABASE
    (neo4j), BATCH_SIZE (1000 rows per write transaction), CONNECTION_TIMEOUT (5 s to
    open a connection), QUERY_TIMEOUT (30 s, enforced by the server per transaction),
    RETRY_TIME (0.75 s: how long the driver goes on retrying a transaction after a
    transient error or lost connection; its first retry waits about 1 s, so the default is
    one retry), RETRIES (1: further tries of a write batch after that) and RETRY_DELAY
    (0.5 s, doubled per try).
    """

    supports_projection = True

    def __init__(self, alias: str, options: dict[str, Any]) -> None:
        super().__init__(alias, options)
        self.url = _option(options, "URL", str, "bolt://localhost:7687")
        self.user = _option(options, "USER", str, "neo4j")
        self._password = _option(options, "PASSWORD", str, "")
        self.database: str | None = _option(options, "DATABASE", str, "neo4j")
        self.batch_size = max(1, _option(options, "BATCH_SIZE", int, 1000))
        self.connection_timeout = _option(options, "CONNECTION_TIMEOUT", float, 5.0)
        self.query_timeout = _option(options, "QUERY_TIMEOUT", float, 30.0)
        self.retry_time = _option(options, "RETRY_TIME", float, 0.75)
        self.retries = max(0, _option(options, "RETRIES", int, 1))
        self.retry_delay = _option(options, "RETRY_DELAY", float, 0.5)
        self._driver: Driver | None = None
        self._driver_lock = threading.Lock()
        self._schema_lock = threading.Lock()
        self._schema_ready = False

    def __repr__(self) -> str:
        return f"<Neo4jGraphBackend {self.alias!r} {self.where}>"

    # --- connection and errors ------------------------------------------------------------

    @property
    def where(self) -> str:
        """The server and database, for messages: never any credentials (a URL's user-info
        part is dropped)."""
        try:
            parts = urlsplit(self.url)
            netloc = parts.netloc.rpartition("@")[2]
            url = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
        except ValueError:
            url = "the configured URL"
        return f"{url} (database {self.database or 'default'})"

    def _safe(self, text: str) -> str:
        """One line, with the password blotted out wherever it might have been echoed."""
        line = " ".join(str(text).split())
        if self._password:
            line = line.replace(self._password, "***")
        return line

    def _error(self, doing: str, exc: BaseException) -> GraphBackendError:
        if isinstance(exc, AuthError):
            reason = f"authentication failed for user {self.user!r}"
        elif isinstance(exc, _UNAVAILABLE):
            reason = f"server unavailable: {exc}"
        else:
            reason = f"{type(exc).__name__}: {exc}"
        return GraphBackendError(self._safe(f"Neo4j at {self.where}: {doing} failed: {reason}"))

    def _get_driver(self) -> Driver:
        driver = self._driver
        if driver is not None:
            return driver
        with self._driver_lock:
            if self._driver is None:
                try:
                    self._driver = GraphDatabase.driver(
                        self.url,
                        auth=(self.user, self._password),
                        connection_timeout=self.connection_timeout,
                        connection_acquisition_timeout=self.connection_timeout + 5.0,
                        max_transaction_retry_time=self.retry_time,
                        user_agent="graphloom",
                    )
                except (ValueError, *_DRIVER_ERRORS) as exc:
                    raise self._error("configuring the driver", exc) from exc
            return self._driver

    def _session(self) -> Session:
        return self._get_driver().session(database=self.database)

    def _ready(self) -> None:
        """Constraints and indexes exist before the first query of this instance."""
        if self._schema_ready:
            return
        with self._schema_lock:
            if not self._schema_ready:
                self.ensure_schema()

    def _read(self, doing: str, work: Callable[[ManagedTransaction], T]) -> T:
        self._ready()
        try:
            with self._session() as session:
                return session.execute_read(unit_of_work(timeout=self.query_timeout)(work))
        except _DRIVER_ERRORS as exc:
            raise self._error(doing, exc) from exc

    def _write(
        self,
        doing: str,
        work: Callable[[ManagedTransaction], T],
        *,
        prepare: bool = True,
        retries: int | None = None,
    ) -> T:
        if prepare:
            self._ready()
        limit = self.retries if retries is None else retries
        attempt = 0
        while True:
            try:
                with self._session() as session:
                    return session.execute_write(unit_of_work(timeout=self.query_timeout)(work))
            except _RETRYABLE as exc:
                if attempt >= limit:
                    raise self._error(doing, exc) from exc
            except _DRIVER_ERRORS as exc:
                raise self._error(doing, exc) from exc
            time.sleep(self.retry_delay * 2**attempt)
            attempt += 1

    def _write_batches(self, doing: str, query: str, rows: Iterable[dict[str, Any]]) -> None:
        for batch in batched(rows, self.batch_size):
            payload = list(batch)

            def work(tx: ManagedTransaction, payload: list[dict[str, Any]] = payload) -> None:
                tx.run(query, {"rows": payload}).consume()

            self._write(doing, work)

    # --- writes -------------------------------------------------------------------------

    def ensure_schema(self) -> None:
        for statement in SCHEMA_STATEMENTS:

            def work(tx: ManagedTransaction, statement: str = statement) -> None:
                tx.run(statement).consume()

            # Schema changes each in their own transaction (Neo4j refuses to mix them). Only
            # the driver's retry: this runs before a read too, which should fail fast.
            self._write("creating the schema", work, prepare=False, retries=0)
        self._schema_ready = True

    def upsert_entities(self, rows: Iterable[EntityRow]) -> None:
        self._write_batches(
            "writing entities", UPSERT_ENTITIES, (asdict(row) for row in _last_by_id(rows))
        )

    def upsert_relations(self, rows: Iterable[RelationRow]) -> None:
        for batch in batched(_last_by_id(rows), self.batch_size):
            payload = [asdict(row) for row in batch]

            def work(tx: ManagedTransaction, payload: list[dict[str, Any]] = payload) -> None:
                tx.run(MOVE_RELATIONS, {"rows": payload}).consume()
                tx.run(UPSERT_RELATIONS, {"rows": payload}).consume()

            self._write("writing relations", work)

    def delete_entities(self, *, workspace_id: int, ids: Iterable[int]) -> None:
        self._delete("deleting entities", DELETE_ENTITIES, workspace_id, ids)

    def delete_relations(self, *, workspace_id: int, ids: Iterable[int]) -> None:
        self._delete("deleting relations", DELETE_RELATIONS, workspace_id, ids)

    def _delete(self, doing: str, query: str, workspace_id: int, ids: Iterable[int]) -> None:
        for batch in batched(sorted({int(i) for i in ids}), self.batch_size):

            def work(tx: ManagedTransaction, batch: tuple[int, ...] = batch) -> None:
                tx.run(query, {"ids": list(batch), "workspace_id": workspace_id}).consume()

            self._write(doing, work)

    def clear_workspace(self, *, workspace_id: int) -> None:
        for query in (CLEAR_RELATIONS_BATCH, CLEAR_ENTITIES_BATCH):

            def work(tx: ManagedTransaction, query: str = query) -> int:
                record = tx.run(
                    query, {"workspace_id": workspace_id, "batch": self.batch_size}
                ).single()
                return int(record["deleted"]) if record else 0

            while self._write("clearing the workspace", work) > 0:
                pass

    # --- reads --------------------------------------------------------------------------

    def neighborhood(
        self,
        *,
        workspace_id: int,
        seeds: Sequence[int],
        hops: int = 1,
        relation_types: Sequence[str] | None = None,
        entity_types: Sequence[str] | None = None,
        direction: Direction = "both",
        limit: int = 500,
    ) -> GraphResult:
        check_neighborhood_args(hops=hops, direction=direction, limit=limit)
        expand = expand_query(direction, typed=relation_types is not None)
        types = list(relation_types) if relation_types is not None else None
        wanted = set(entity_types) if entity_types is not None else None
        seed_ids = sorted({int(s) for s in seeds})
        max_edges = limit * EDGES_PER_NODE

        def work(tx: ManagedTransaction) -> GraphResult:
            params: dict[str, Any] = {"workspace_id": workspace_id, "types": types}
            known = [r["id"] for r in tx.run(NODES_BY_ID, {**params, "ids": seed_ids})]
            if not known:
                return GraphResult()
            depth = {int(i): 0 for i in known}
            # levels[d]: the nodes first reached at depth d that may be returned.
            levels: list[list[int]] = [sorted(depth)]
            frontier = levels[0]
            returnable = len(frontier)
            for level in range(1, hops + 1):
                # Past the limit nothing deeper can be returned; at it, one more hop says
                # whether the answer was cut.
                if not frontier or returnable > limit:
                    break
                reached: list[int] = []
                shown: list[int] = []
                for row in tx.run(expand, {**params, "frontier": frontier}):
                    node_id = int(row["id"])
                    if node_id in depth:
                        continue
                    depth[node_id] = level
                    reached.append(node_id)
                    if wanted is None or row["type"] in wanted:
                        shown.append(node_id)
                frontier = reached
                levels.append(sorted(shown))
                returnable += len(shown)

            chosen: list[int] = []
            truncated = False
            for ids in levels:
                room = limit - len(chosen)
                if len(ids) <= room:
                    chosen.extend(ids)
                    continue
                truncated = True
                if room > 0:
                    chosen.extend(
                        int(r["id"])
                        for r in tx.run(TOP_BY_DEGREE, {**params, "ids": ids, "top": room})
                    )
                break
            rows = {int(r["id"]): r.data() for r in tx.run(NODES_BY_ID, {**params, "ids": chosen})}
            nodes = sorted(
                (_node(rows[i], depth=depth[i]) for i in chosen if i in rows),
                key=lambda n: (n.depth, -n.degree, n.id),
            )
            edges = [
                _edge(r.data())
                for r in tx.run(
                    edges_query(typed=types is not None, limited=True),
                    {**params, "ids": [n.id for n in nodes], "max_edges": max_edges + 1},
                )
            ]
            if len(edges) > max_edges:
                edges, truncated = edges[:max_edges], True
            return GraphResult(nodes=nodes, edges=edges, truncated=truncated)

        if not seed_ids:
            return GraphResult()
        return self._read("reading a neighbourhood", work)

    def shortest_path(
        self,
        *,
        workspace_id: int,
        source: int,
        target: int,
        max_hops: int = 4,
        relation_types: Sequence[str] | None = None,
    ) -> PathResult | None:
        source, target = int(source), int(target)
        types = list(relation_types) if relation_types is not None else None
        params: dict[str, Any] = {"workspace_id": workspace_id, "types": types}

        def one_node(tx: ManagedTransaction) -> PathResult | None:
            row = tx.run(NODES_BY_ID, {**params, "ids": [source]}).single()
            return PathResult(nodes=[_node(row.data(), depth=0)], edges=[]) if row else None

        if source == target:
            return self._read("reading a path", one_node)
        if int(max_hops) < 1:
            return None
        query = shortest_path_query(max_hops, typed=types is not None)

        def work(tx: ManagedTransaction) -> PathResult | None:
            found = tx.run(query, {**params, "source": source, "target": target}).single()
            if found is None:
                return None
            order = [int(i) for i in found["node_ids"]]
            rows = {int(r["id"]): r.data() for r in tx.run(NODES_BY_ID, {**params, "ids": order})}
            edges = [_edge(r.data()) for r in tx.run(PATH_EDGES, {**params, "path_ids": order})]
            return PathResult(
                nodes=[_node(rows[i], depth=position) for position, i in enumerate(order)],
                edges=edges,
            )

        return self._read("reading a path", work)

    def hubs(
        self, *, workspace_id: int, entity_type: str | None = None, limit: int = 20
    ) -> list[GraphNode]:
        def work(tx: ManagedTransaction) -> list[GraphNode]:
            params = {"workspace_id": workspace_id, "entity_type": entity_type, "top": limit}
            return [_node(r.data()) for r in tx.run(HUBS, params)]

        if limit <= 0:
            return []
        return self._read("reading hubs", work)

    def subgraph(self, *, workspace_id: int, ids: Sequence[int]) -> GraphResult:
        wanted = sorted({int(i) for i in ids})

        def work(tx: ManagedTransaction) -> GraphResult:
            params = {"workspace_id": workspace_id, "ids": wanted}
            nodes = sorted((_node(r.data()) for r in tx.run(NODES_BY_ID, params)), key=_by_id)
            found = {"workspace_id": workspace_id, "ids": [n.id for n in nodes]}
            edges = [_edge(r.data()) for r in tx.run(edges_query(typed=False), found)]
            return GraphResult(nodes=nodes, edges=edges)

        if not wanted:
            return GraphResult()
        return self._read("reading a subgraph", work)

    def stats(self, *, workspace_id: int) -> GraphStats:
        def work(tx: ManagedTransaction) -> GraphStats:
            params = {"workspace_id": workspace_id}
            entity_types = {r["type"]: int(r["n"]) for r in tx.run(STATS_ENTITY_TYPES, params)}
            relation_types = {r["type"]: int(r["n"]) for r in tx.run(STATS_RELATION_TYPES, params)}
            degrees = {int(r["degree"]): int(r["n"]) for r in tx.run(STATS_DEGREES, params)}
            return build_stats(entity_types, relation_types, degrees)

        return self._read("reading statistics", work)

    # --- lifecycle ----------------------------------------------------------------------

    def check(self) -> dict[str, Any]:
        try:
            with self._session() as session:
                session.run(HEALTH).consume()
        except GraphBackendError as exc:
            return {"ok": False, "backend": "neo4j", "error": str(exc)}
        except (*_DRIVER_ERRORS, OSError, ValueError) as exc:
            return {"ok": False, "backend": "neo4j", "error": str(self._error("connecting", exc))}
        return {"ok": True, "backend": "neo4j"}

    def close(self) -> None:
        with self._driver_lock:
            driver, self._driver = self._driver, None
            self._schema_ready = False
        if driver is not None:
            driver.close()


# --- helpers ----------------------------------------------------------------------------------


def _last_by_id[R: (EntityRow, RelationRow)](rows: Iterable[R]) -> Iterator[R]:
    """One row per id (the last one given), in id order: a batch never MERGEs the same id
    twice, and concurrent batches lock nodes in the same order (fewer deadlocks)."""
    latest = {row.id: row for row in rows}
    return (latest[i] for i in sorted(latest))


def _by_id(node: GraphNode) -> int:
    return node.id
