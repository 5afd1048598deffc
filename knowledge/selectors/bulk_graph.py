"""The explorer's bulk load: thousands of nodes and the edges among them in one payload,
from hubs, a search, ids or a community.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from knowledge.graph import get_graph_backend
from knowledge.selectors.entities import search_entities
from knowledge.selectors.graph import graph_out
from knowledge.selectors.params import parse_ids, parse_names
from workspaces.errors import InvalidInput
from workspaces.models import Workspace

# Nodes one bulk load may return. The explorer has no cap of its own: it loads more by
# expanding, and can ask again for more hubs; this bounds the work of one request.
MAX_BULK_NODES = 20_000
DEFAULT_HUBS = 150


def _day(value: str | None, *, label: str, end: bool) -> datetime | None:
    """`YYYY-MM-DD` (or a full ISO 8601 time) to an aware time; a bare day `before` means
    up to the end of that day, so a one-day range finds that day's entities."""
    if not value:
        return None
    try:
        if len(value) == 10:
            day = date.fromisoformat(value)
            moment = datetime.combine(day, time.min, tzinfo=UTC)
            return moment + timedelta(days=1, microseconds=-1) if end else moment
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInput(f"{label}: a date like 2026-01-31.") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _number(value: Any, *, label: str, low: int, high: int) -> int | None:
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"{label}: a whole number.") from None
    if not low <= number <= high:
        raise InvalidInput(f"{label}: {low} to {high}.")
    return number


def _id_list(value: Any, *, label: str) -> list[int]:
    if value is None:
        return []
    if isinstance(value, str):
        return parse_ids(value, label=label, limit=MAX_BULK_NODES)
    if not isinstance(value, list) or len(value) > MAX_BULK_NODES:
        raise InvalidInput(f"{label}: a list of at most {MAX_BULK_NODES} entity ids.")
    if not all(isinstance(i, int) and not isinstance(i, bool) and 0 < i < 2**63 for i in value):
        raise InvalidInput(f"{label}: entity ids (positive whole numbers).")
    return list(dict.fromkeys(value))


def _names(value: Any) -> list[str] | None:
    if isinstance(value, list):
        value = ",".join(str(v) for v in value)
    return parse_names(value) if isinstance(value, str) else None


def get_bulk_graph(workspace: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    """The explorer's bulk loads (explorer/graph_views.graph_json): the graph payload
    (nodes, edges among them, truncated) plus `count`, from raw request parameters.

    `hubs`: the N best-connected active entities matching the filters (count: how many
    match in all). `ids`: those of the given entities that are active and match the
    filters (count: how many); with `touching`, only the edges with an end among those;
    with `edges` false, only which of them match (`{"id"}` nodes, no edges, no traversal).
    Filters: `types` (entity type names), `source` (a source id), `seen_after` /
    `seen_before` (seen at some time in the range), `min_degree`."""
    types = _names(params.get("types"))
    source = _number(params.get("source"), label="source", low=1, high=2**63 - 1)
    after = _day(params.get("seen_after"), label="seen_after", end=False)
    before = _day(params.get("seen_before"), label="seen_before", end=True)
    min_degree = _number(params.get("min_degree"), label="min_degree", low=0, high=10**9)
    filtered = bool(types or source or after or before or min_degree)
    entities = search_entities(
        workspace,
        source_id=source,
        seen_after=after,
        seen_before=before,
        min_degree=min_degree,
        order="-degree",
    )
    if types:
        entities = entities.filter(type__name__in=types)
    backend = get_graph_backend()
    if params.get("ids") is not None:
        asked = _id_list(params.get("ids"), label="ids")
        ids = (
            list(entities.filter(pk__in=asked).values_list("pk", flat=True))
            if (filtered or params.get("edges") is False) and asked
            else asked
        )
        count = None
    else:
        limit = _number(params.get("hubs"), label="hubs", low=0, high=MAX_BULK_NODES)
        limit = DEFAULT_HUBS if limit is None else limit
        if filtered:
            ids = list(entities.values_list("pk", flat=True)[:limit])
        else:
            ids = [n.id for n in backend.hubs(workspace_id=workspace.pk, limit=limit)]
        count = entities.count() if len(ids) >= limit else len(ids)
    if params.get("edges") is False:
        return {
            "nodes": [{"id": i} for i in ids],
            "edges": [],
            "truncated": False,
            "count": len(ids),
        }
    result = backend.subgraph(workspace_id=workspace.pk, ids=ids) if ids else None
    payload = graph_out(result) if result is not None else {"nodes": [], "edges": []}
    touching = set(_id_list(params.get("touching"), label="touching"))
    if touching:
        payload["edges"] = [
            e for e in payload["edges"] if e["source"] in touching or e["target"] in touching
        ]
    for node in payload["nodes"]:
        node.pop("depth", None)  # always null here; the client reads a missing key alike
    payload["count"] = len(payload["nodes"]) if count is None else count
    payload["truncated"] = payload["count"] > len(payload["nodes"])
    return payload
