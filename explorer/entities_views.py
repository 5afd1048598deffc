"""The Entities page: the current workspace's entities as a table people sort, filter and
search, export as CSV, and (editors) act on in bulk.

Members read it (viewers too). What the table shows is all in the query string (`q`,
`type` repeated, `state`, `curated`, `min_degree`, `source`, `sort` with `-` for
descending, `page`), so a link shows a colleague the same rows, and the export takes the
same string. Each row's name opens the entity panel in the page's side panel (htmx; the
link alone opens it as a page) and "In graph" opens the explorer at the node.

Bulk actions (`/entities/bulk/`, editors; the server refuses anyone else with 403) go
through curation's own actions, in one request: merge the selected entities into the
chosen survivor (one event, undone by `do_unmerge`), retype each, delete each
(`do_restore_entity` undoes it) or block each name as the quality page does
(`do_undo_block`). Each entity is its own transaction, so one refused entity (a clash, a
state) is reported in the outcome while the others go through. An id of another workspace
or of no entity refuses the whole request with 404 before anything is done. As on the
quality page, an htmx request gets 200 with the outcome (errors included) in the results,
since htmx swaps no 4xx answer; any other client gets the page with the error's status.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, TypeGuard
from urllib.parse import urlencode

from django.http import Http404, HttpResponse, QueryDict, StreamingHttpResponse
from django.shortcuts import render
from django.urls import URLPattern, path, reverse
from django.views.decorators.http import require_GET, require_POST

from explorer.workspace_pages import WorkspaceRequest, workspace_page
from ingest.selectors import get_sources
from knowledge.actions.curation.block import do_undo_block
from knowledge.actions.curation.entities import (
    do_delete_entity,
    do_restore_entity,
    do_retype_entity,
)
from knowledge.actions.curation.merge import do_merge_entities, do_unmerge
from knowledge.actions.quality import do_block_entity_name
from knowledge.models import CurationEvent, Entity, EntityState
from knowledge.selectors.curation import all_curation_events_of
from knowledge.selectors.entity_table import (
    EXPORT_COLUMNS,
    SORT_COLUMNS,
    STATES,
    Curated,
    EntityFilters,
    SortColumn,
    entities_by_id,
    entity_table_page,
    iter_entity_table,
)
from knowledge.selectors.schema import list_entity_types
from workspaces.errors import DomainError, InvalidInput
from workspaces.models import Role, Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Sources offered by the source filter (newest first), and entities one bulk request takes.
MAX_SOURCE_CHOICES = 300
MAX_BULK = 200
# The columns a header sorts, their labels, and the direction a first click sorts in.
COLUMNS = (
    ("name", "Name", False),
    ("type", "Type", False),
    ("degree", "Degree", True),
    ("mentions", "Mentions", True),
    ("sources", "Sources", True),
    ("first_seen", "First seen", True),
    ("last_seen", "Last seen", True),
)
FILTER_PARAMS = ("q", "type", "state", "curated", "min_degree", "source")
CURATED: dict[str, Curated] = {"yes": "yes", "no": "no"}
# Cells a spreadsheet would read as a formula (OWASP's list: = + - @, tab, carriage return).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _workspace(request: WorkspaceRequest) -> Workspace:
    return request.membership.workspace


# --- the query string ---------------------------------------------------------------------


def _number(text: str | None) -> int | None:
    text = (text or "").strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else None


def parse_filters(query: QueryDict) -> EntityFilters:
    """The table's filters and sort from a query string; what makes no sense is ignored
    (a shared link with a stale type still opens)."""
    q = query.get("q", "").strip()[:300]
    column, descending = _sort(query.get("sort", ""), searching=bool(q))
    state = query.get("state", "")
    return EntityFilters(
        q=q,
        types=tuple(dict.fromkeys(t.strip() for t in query.getlist("type") if t.strip()))[:50],
        state=state if state in STATES else EntityState.ACTIVE,
        curated=CURATED.get(query.get("curated", ""), ""),
        min_degree=_number(query.get("min_degree")),
        source_id=_number(query.get("source")),
        sort=column,
        descending=descending,
    )


def _is_sort_column(column: str) -> TypeGuard[SortColumn]:
    return column in SORT_COLUMNS


def _sort(sort: str, *, searching: bool) -> tuple[SortColumn, bool]:
    """The column and direction `sort` asks for (`-` first for descending). Relevance
    sorts only a search, and is a search's default; name is the others'."""
    column = sort.lstrip("-")
    if _is_sort_column(column) and (column != "relevance" or searching):
        return column, sort.startswith("-")
    default: SortColumn = "relevance" if searching else "name"
    return default, False


def _filter_pairs(query: QueryDict) -> list[tuple[str, str]]:
    return [(key, value) for key in FILTER_PARAMS for value in query.getlist(key) if value]


def _query(workspace: Workspace, query: QueryDict, **extra: str) -> str:
    """The page's query string with its filters, and `extra` (sort, page) on top."""
    pairs = [("ws", workspace.slug), *_filter_pairs(query)]
    pairs += [(key, value) for key, value in extra.items() if value]
    return urlencode(pairs)


def _sort_value(filters: EntityFilters) -> str:
    return ("-" if filters.descending else "") + filters.sort


def _headers(workspace: Workspace, query: QueryDict, filters: EntityFilters) -> list[dict]:
    """Each column's header: its label, the link that sorts by it (the other direction
    when it sorts the table already), and its `aria-sort`."""
    headers = []
    for column, label, down_first in COLUMNS:
        current = filters.sort == column
        descending = not filters.descending if current else down_first
        sort = ("-" if descending else "") + column
        headers.append(
            {
                "column": column,
                "label": label,
                "url": f"{reverse('explorer:entities')}?{_query(workspace, query, sort=sort)}",
                "aria_sort": (
                    ("descending" if filters.descending else "ascending") if current else ""
                ),
                "numeric": down_first,
            }
        )
    return headers


# --- the page -------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What a bulk action did: the summary, each entity's result, and what Undo sends."""

    message: str
    error: bool = False
    status: int = 200
    items: list[dict[str, Any]] = field(default_factory=list)
    undo: str = ""  # the undo's action: "unmerge" | "restore" | "unblock"
    undo_events: list[int] = field(default_factory=list)
    undo_ids: list[int] = field(default_factory=list)

    @property
    def can_undo(self) -> bool:
        return bool(self.undo and (self.undo_events or self.undo_ids))


def _context(
    request: WorkspaceRequest, query: QueryDict, outcome: Outcome | None
) -> dict[str, Any]:
    workspace = _workspace(request)
    filters = parse_filters(query)
    page = entity_table_page(workspace, filters, page=_number(query.get("page")) or 1)
    sort = _sort_value(filters)
    return {
        "nav": "entities",
        "workspace": workspace,
        "ws": workspace.slug,
        "filters": filters,
        "page": page,
        "headers": _headers(workspace, query, filters),
        "type_choices": [t.name for t in list_entity_types(workspace)],
        "source_choices": list(get_sources(workspace).only("id", "name")[:MAX_SOURCE_CHOICES]),
        "state_choices": STATES,
        "query": _query(workspace, query, sort=sort, page=str(page.number)),
        "export_query": _query(workspace, query, sort=sort),
        "previous_query": _query(workspace, query, sort=sort, page=str(page.number - 1)),
        "next_query": _query(workspace, query, sort=sort, page=str(page.number + 1)),
        "last_query": _query(workspace, query, sort=sort, page=str(page.num_pages)),
        "outcome": outcome,
        # Merged entities come back through their merge's undo, not from this table.
        "selectable": filters.state != EntityState.MERGED,
    }


@workspace_page()
@require_GET
def entities(request: WorkspaceRequest) -> HttpResponse:
    return render(request, "explorer/entities/list.html", _context(request, request.GET, None))


# --- the export -------------------------------------------------------------------------------


def safe_cell(value: object) -> str:
    """A cell a spreadsheet shows as text: one starting like a formula gets a quote."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


class _Line:
    """csv.writer's file: each row written is handed back as a string."""

    def write(self, text: str) -> str:
        return text


def _cell(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value


def _csv_rows(rows: Iterable[tuple[Any, ...]]) -> Iterator[str]:
    writer = csv.writer(_Line())
    yield writer.writerow(EXPORT_COLUMNS)
    for row in rows:
        yield writer.writerow([safe_cell(_cell(value)) for value in row])


@workspace_page()
@require_GET
def export_csv(request: WorkspaceRequest) -> StreamingHttpResponse:
    """Every row the page's filters match (not one page), in its order, streamed."""
    workspace = _workspace(request)
    rows = iter_entity_table(workspace, parse_filters(request.GET))
    response = StreamingHttpResponse(_csv_rows(rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="entities-{workspace.slug}.csv"'
    return response


# --- bulk actions -------------------------------------------------------------------------------


def _ids(values: list[str], label: str) -> list[int]:
    ids = []
    for value in values:
        number = _number(value)
        if number is None:
            raise InvalidInput(f"{label}: entity ids, got {value[:40]!r}.")
        ids.append(number)
    ids = list(dict.fromkeys(ids))
    if len(ids) > MAX_BULK:
        raise InvalidInput(f"At most {MAX_BULK} entities at once.")
    return ids


def _own_entities(workspace: Workspace, ids: list[int]) -> dict[int, Entity]:
    """The entities named, all of this workspace, or 404 for the whole request."""
    found = entities_by_id(workspace, ids)
    if len(found) != len(ids):
        raise Http404("No such entity in this workspace.")
    return found


def _own_events(workspace: Workspace, values: list[str]) -> list[int]:
    events = _ids(values, "event")
    if not events:
        raise InvalidInput("Say which action to undo.")
    if not all_curation_events_of(workspace, events):
        raise Http404("No such curation event in this workspace.")
    return events


def _actor(request: WorkspaceRequest) -> User:
    """The signed-in user (`workspace_page` let no one else through)."""
    return request.user


def _result(entity_id: int, name: str, message: str, *, error: bool) -> dict[str, Any]:
    return {"id": entity_id, "name": name, "message": message, "error": error}


def _each(
    request: WorkspaceRequest, entities: dict[int, Entity], act: Callable[..., CurationEvent]
) -> tuple[list[dict[str, Any]], list[CurationEvent]]:
    """`act(workspace=, entity_id=, actor=)` on every entity, each its own transaction;
    each one's result, and the events of those done."""
    workspace, actor = _workspace(request), _actor(request)
    items, events = [], []
    for entity in entities.values():
        try:
            event = act(workspace=workspace, entity_id=entity.pk, actor=actor)
        except DomainError as error:
            items.append(_result(entity.pk, entity.name, error.message, error=True))
        else:
            events.append(event)
            items.append(_result(entity.pk, entity.name, event.summary, error=False))
    return items, events


PLURALS = {"entity": "entities", "action": "actions"}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun if n == 1 else PLURALS[noun]}"


def _summary(template: str, items: list[dict[str, Any]], noun: str = "entity") -> Outcome:
    """`template` with `{n}` the count done; the failures counted after it."""
    done = sum(1 for item in items if not item["error"])
    failed = len(items) - done
    message = template.format(n=_count(done, noun))
    if failed:
        message += f"; {_count(failed, noun)} could not be"
    return Outcome(message + ".", error=done == 0, status=200 if done else 409, items=items)


def _merge(request: WorkspaceRequest, entities: dict[int, Entity]) -> Outcome:
    """One merge of all of them into the survivor chosen among them (or the default one)."""
    survivor = _number(request.POST.get("survivor"))
    if survivor is not None and survivor not in entities:
        raise InvalidInput("Choose the entity to keep among the selected ones.")
    event = do_merge_entities(workspace=_workspace(request), merged_ids=list(entities),
                              survivor_id=survivor, actor=_actor(request))  # fmt: skip
    return Outcome(event.summary, undo="unmerge", undo_events=[event.pk])


def _retype(request: WorkspaceRequest, entities: dict[int, Entity]) -> Outcome:
    type_name = request.POST.get("type", "").strip()
    if not type_name:
        raise InvalidInput("Choose the type to give them.")
    items, _ = _each(request, entities, partial(do_retype_entity, type_name=type_name))
    return _summary(f"Retyped {{n}} to {type_name}", items)


def _delete(request: WorkspaceRequest, entities: dict[int, Entity]) -> Outcome:
    items, _ = _each(request, entities, do_delete_entity)
    outcome = _summary("Deleted {n}", items)
    outcome.undo, outcome.undo_ids = "restore", [i["id"] for i in items if not i["error"]]
    return outcome


def _block(request: WorkspaceRequest, entities: dict[int, Entity]) -> Outcome:
    items, events = _each(request, entities, do_block_entity_name)
    outcome = _summary("Deleted {n} and blocked their names in every type", items)
    outcome.undo, outcome.undo_events = "unblock", [event.pk for event in events]
    return outcome


def _restore(request: WorkspaceRequest, entities: dict[int, Entity]) -> Outcome:
    items, _ = _each(request, entities, do_restore_entity)
    return _summary("Restored {n}", items)


def _undo_events(request: WorkspaceRequest, undo: Callable[..., CurationEvent]) -> Outcome:
    """Undo each posted event (merges or blocks) of this workspace."""
    workspace, actor = _workspace(request), _actor(request)
    items = []
    for event_id in _own_events(workspace, request.POST.getlist("event")):
        try:
            event = undo(workspace=workspace, event_id=event_id, actor=actor)
        except DomainError as error:
            items.append(_result(event_id, f"event {event_id}", error.message, error=True))
        else:
            items.append(_result(event_id, event.summary, event.summary, error=False))
    if len(items) == 1:
        done = not items[0]["error"]
        return Outcome(str(items[0]["message"]), error=not done, status=200 if done else 409)
    return _summary("Undid {n}", items, noun="action")


ENTITY_ACTIONS: dict[str, Callable[[WorkspaceRequest, dict[int, Entity]], Outcome]] = {
    "merge": _merge,
    "retype": _retype,
    "delete": _delete,
    "block": _block,
    "restore": _restore,
}


def _bulk_outcome(request: WorkspaceRequest) -> Outcome:
    """Run the posted action; Http404 (nothing done) for ids not of this workspace."""
    action = request.POST.get("action", "")
    if action == "unmerge":
        return _undo_events(request, do_unmerge)
    if action == "unblock":
        return _undo_events(request, do_undo_block)
    if action not in ENTITY_ACTIONS:
        raise InvalidInput("Choose what to do with the selected entities.")
    ids = _ids(request.POST.getlist("ids"), "ids")
    if not ids:
        raise InvalidInput("Select the entities first.")
    return ENTITY_ACTIONS[action](request, _own_entities(_workspace(request), ids))


@workspace_page(role=Role.EDITOR)
@require_POST
def bulk(request: WorkspaceRequest) -> HttpResponse:
    """One bulk action (or its undo) on the selected entities; answers with the table as
    the URL's query string shows it, and the outcome above it."""
    try:
        outcome = _bulk_outcome(request)
    except DomainError as error:
        outcome = Outcome(error.message, error=True, status=error.status)
    context = _context(request, request.GET, outcome)
    if getattr(request, "htmx", False):
        return render(request, "explorer/entities/list.html#results", context)
    return render(request, "explorer/entities/list.html", context, status=outcome.status)


urlpatterns: list[URLPattern] = [
    path("entities/", entities, name="entities"),
    path("entities/export.csv", export_csv, name="entities_export"),
    path("entities/bulk/", bulk, name="entities_bulk"),
]
