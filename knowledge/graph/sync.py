"""Keeping graph projections (Neo4j) in step with Postgres, the system of record.

Two paths, both reading the rows as Postgres has them, never trusting what a caller says
changed:

- write-through: every action that changes entities or relations calls
  `schedule_graph_sync` with the ids it touched, inside its transaction. After the commit
  the current rows are read and pushed to each projection backend: active rows are
  upserted, anything else (merged, deleted, gone) is deleted. A rolled-back transaction
  pushes nothing. When no configured backend keeps a projection (the default, Postgres)
  this costs nothing: no query, no callback.
- rebuild: `do_sync_workspace` (`manage.py sync_graph`) clears a workspace's projection and
  streams every active entity and relation into it.

A failed push never fails the user's write, which has already committed: it is logged as
`graph_sync_failed` with the backend, the workspace and the ids, and the projection stays
behind until `manage.py sync_graph --workspace SLUG` rebuilds it (docs/operations.md,
"Neo4j projection").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from functools import partial
from itertools import batched
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils.module_loading import import_string

from knowledge.graph import InvalidGraphBackendError, get_graph_backend
from knowledge.graph.base import EntityRow, GraphBackend, GraphBackendError, RelationRow
from knowledge.models import Entity, EntityState, Relation
from workspaces.models import Workspace

logger = logging.getLogger(__name__)

# Ids named in one failure log line; the rest are counted (the fix is a rebuild anyway).
LOGGED_IDS = 50
DEFAULT_BATCH_SIZE = 1000


def projection_aliases() -> list[str]:
    """The aliases in GRAPH_BACKENDS whose backend keeps a projection. Reads settings and
    imports the classes; never creates a backend or connects."""
    aliases = []
    backends: dict[str, dict[str, Any]] = settings.GRAPH_BACKENDS
    for alias, params in backends.items():
        try:
            backend_class = import_string(params["BACKEND"])
        except (ImportError, KeyError) as exc:
            raise InvalidGraphBackendError(
                f"GRAPH_BACKENDS[{alias!r}]: cannot load BACKEND {params.get('BACKEND')!r}: {exc}"
            ) from exc
        if getattr(backend_class, "supports_projection", False):
            aliases.append(alias)
    return aliases


def schedule_graph_sync(
    *, workspace_id: int, entity_ids: Iterable[int], relation_ids: Iterable[int]
) -> None:
    """After the current transaction commits, push these entities and relations (their
    state then) to every projection backend. Call it inside the transaction that changed
    them; outside one it pushes at once. Nothing at all happens without a projection
    backend."""
    aliases = projection_aliases()
    if not aliases:
        return
    entities, relations = sorted(set(entity_ids)), sorted(set(relation_ids))
    if not entities and not relations:
        return
    transaction.on_commit(
        partial(
            push_graph_changes,
            workspace_id=workspace_id,
            entity_ids=entities,
            relation_ids=relations,
            aliases=aliases,
        ),
        robust=True,
    )


@dataclass(frozen=True, slots=True)
class GraphChanges:
    """What the projection should do for a set of ids, read from Postgres."""

    entities: list[EntityRow]
    relations: list[RelationRow]
    gone_entities: list[int]
    gone_relations: list[int]


def read_graph_changes(
    *, workspace_id: int, entity_ids: Iterable[int], relation_ids: Iterable[int]
) -> GraphChanges:
    """The current rows of these ids in the workspace: active ones to upsert (with the
    endpoints of active relations, so the projection never holds a bare endpoint), the
    rest to delete. Two queries."""
    entity_ids, relation_ids = set(entity_ids), set(relation_ids)
    relation_rows = (
        _active_relations(workspace_id).filter(pk__in=relation_ids).values_list(*RELATION_COLUMNS)
    )
    relations = [_relation_row(workspace_id, row) for row in relation_rows]
    endpoints = {r.source for r in relations} | {r.target for r in relations}
    entity_rows = (
        _active_entities(workspace_id)
        .filter(pk__in=entity_ids | endpoints)
        .values_list(*ENTITY_COLUMNS)
    )
    entities = [_entity_row(workspace_id, row) for row in entity_rows]
    return GraphChanges(
        entities=entities,
        relations=relations,
        gone_entities=sorted(entity_ids - {e.id for e in entities}),
        gone_relations=sorted(relation_ids - {r.id for r in relations}),
    )


def push_graph_changes(
    *,
    workspace_id: int,
    entity_ids: list[int],
    relation_ids: list[int],
    aliases: list[str] | None = None,
) -> bool:
    """Push the current state of these ids to each projection backend (all of them when
    `aliases` is None). Returns whether every push succeeded; never raises — a failure is
    logged (`graph_sync_failed`) for `sync_graph` to repair."""
    targets = projection_aliases() if aliases is None else aliases
    if not targets:
        return True
    try:
        changes = read_graph_changes(
            workspace_id=workspace_id, entity_ids=entity_ids, relation_ids=relation_ids
        )
    except Exception as exc:
        _log_failure("postgres", workspace_id, entity_ids, relation_ids, exc)
        return False
    ok = True
    for alias in targets:
        try:
            backend = get_graph_backend(alias)
            # Deletions first: a merged entity's node goes (with its edges) before the
            # re-pointed edges are written to the survivor.
            if changes.gone_relations:
                backend.delete_relations(workspace_id=workspace_id, ids=changes.gone_relations)
            if changes.gone_entities:
                backend.delete_entities(workspace_id=workspace_id, ids=changes.gone_entities)
            if changes.entities:
                backend.upsert_entities(changes.entities)
            if changes.relations:
                backend.upsert_relations(changes.relations)
        except Exception as exc:
            ok = False
            _log_failure(alias, workspace_id, entity_ids, relation_ids, exc)
    return ok


def _log_failure(
    alias: str, workspace_id: int, entity_ids: list[int], relation_ids: list[int], exc: Exception
) -> None:
    logger.error(
        "graph_sync_failed backend=%s workspace=%s entities=%s relations=%s: %s "
        "(the projection is behind: run `manage.py sync_graph` for this workspace)",
        alias,
        workspace_id,
        _ids_text(entity_ids),
        _ids_text(relation_ids),
        exc,
        # Our backends' errors say what failed; anything else is a bug worth a traceback.
        exc_info=not isinstance(exc, GraphBackendError),
    )


def _ids_text(ids: list[int]) -> str:
    shown = ",".join(str(i) for i in ids[:LOGGED_IDS])
    more = len(ids) - LOGGED_IDS
    return f"[{shown}]" + (f"+{more} more" if more > 0 else "")


# --- Full rebuild -----------------------------------------------------------------------------


@dataclass(slots=True)
class SyncReport:
    """What a rebuild did (and, while it runs, how far it got)."""

    workspace: str
    alias: str
    backend: str
    # False: the backend reads Postgres directly and there was nothing to project.
    projected: bool = False
    entities_total: int = 0
    relations_total: int = 0
    entities: int = 0
    relations: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


SyncProgress = Callable[[SyncReport], None]


def do_sync_workspace(
    *, workspace: Workspace, alias: str = "default", progress: SyncProgress | None = None
) -> SyncReport:
    """Rebuild the workspace's projection in backend `alias` from Postgres: schema, clear,
    then every active entity and relation in batches (`progress` is called with the report
    after each batch). Raises GraphBackendError when the backend fails; the projection is
    then incomplete until a rebuild succeeds.

    Writes that commit while a rebuild runs are pushed by the write path as usual; one that
    lands between the rebuild reading a row and writing it can be overwritten by the older
    row, so rebuild again after heavy concurrent curation."""
    backend = get_graph_backend(alias)
    report = SyncReport(workspace=workspace.slug, alias=alias, backend=_class_path(backend))
    if not backend.supports_projection:
        return report
    started = time.monotonic()
    report.projected = True
    batch = _batch_size(backend)
    entities = _active_entities(workspace.pk)
    relations = _active_relations(workspace.pk)
    report.entities_total, report.relations_total = entities.count(), relations.count()
    if progress:
        progress(report)
    backend.ensure_schema()
    backend.clear_workspace(workspace_id=workspace.pk)
    rows = entities.order_by("pk").values_list(*ENTITY_COLUMNS)
    for chunk in batched(rows.iterator(chunk_size=batch), batch):
        backend.upsert_entities([_entity_row(workspace.pk, row) for row in chunk])
        report.entities += len(chunk)
        if progress:
            progress(report)
    edges = relations.order_by("pk").values_list(*RELATION_COLUMNS)
    for chunk in batched(edges.iterator(chunk_size=batch), batch):
        backend.upsert_relations([_relation_row(workspace.pk, row) for row in chunk])
        report.relations += len(chunk)
        if progress:
            progress(report)
    report.seconds = round(time.monotonic() - started, 3)
    return report


def _active_entities(workspace_id: int) -> Any:
    return Entity.objects.filter(workspace_id=workspace_id, state=EntityState.ACTIVE)


def _active_relations(workspace_id: int) -> Any:
    """Active relations between active entities (what every backend answers over)."""
    return Relation.objects.filter(
        Q(source__state=EntityState.ACTIVE) & Q(target__state=EntityState.ACTIVE),
        workspace_id=workspace_id,
        state=EntityState.ACTIVE,
    )


ENTITY_COLUMNS = ("pk", "name", "type__name", "mention_count", "community")
RELATION_COLUMNS = ("pk", "source_id", "target_id", "type__name", "weight")


def _entity_row(workspace_id: int, row: tuple[Any, ...]) -> EntityRow:
    pk, name, kind, mention_count, community = row
    return EntityRow(
        id=pk,
        workspace_id=workspace_id,
        name=name,
        type=kind,
        mention_count=mention_count,
        community=community,
    )


def _relation_row(workspace_id: int, row: tuple[Any, ...]) -> RelationRow:
    pk, source, target, kind, weight = row
    return RelationRow(
        id=pk, workspace_id=workspace_id, source=source, target=target, type=kind, weight=weight
    )


def _batch_size(backend: GraphBackend) -> int:
    try:
        return max(1, int(backend.options.get("BATCH_SIZE") or DEFAULT_BATCH_SIZE))
    except (TypeError, ValueError):
        return DEFAULT_BATCH_SIZE


def _class_path(backend: GraphBackend) -> str:
    return f"{type(backend).__module__}.{type(backend).__qualname__}"
