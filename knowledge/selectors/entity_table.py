"""The Entities page's table: one workspace's entities filtered, sorted by any column and
cut into pages of 50, with the total count, and the same rows unpaged for the CSV export.

Offset pagination, not keyset: the table sorts by any of seven columns in either
direction (two of them nullable), its page numbers go into links people share ("page 3
of the people, by mentions"), and it shows a total and a last page. Keyset pagination
would need a cursor per sort column and could offer neither page numbers nor a last page.
An offset costs the rows it skips, which the indexed sorts skip inside an index.

At 100k entities (measured on the embedded server): a first page with its total takes
about 18 ms sorted by name (`entity_ws_canon`) or degree (`entity_ws_degree`), of which
the count, an index-only scan, is 15; page 500 about 90 ms. Mentions, sources, first or
last seen and type have no index of their own, so those sorts read the workspace's rows
(100-135 ms); a filter (types, a source, a search) narrows what they read.

The name search is entity search's own (`search_entities`: any word of a name or alias,
by prefix, one typo forgiven), so the page finds what the API and the explorer find.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from django.db.models import F, Func, IntegerField, QuerySet
from django.db.models.expressions import OrderBy

from knowledge.models import Entity, EntityState
from knowledge.selectors.entities import search_entities
from workspaces.models import Workspace

PAGE_SIZE = 50
# The table pages through its first 100,000 rows (an offset costs what it skips); a
# filter or a search reaches the rest, the export has them all.
MAX_PAGE = 2000

SortColumn = Literal[
    "name", "type", "degree", "mentions", "sources", "first_seen", "last_seen", "relevance"
]
SORT_COLUMNS: tuple[str, ...] = get_args(SortColumn)
Curated = Literal["", "yes", "no"]
STATES: tuple[str, ...] = tuple(EntityState.values)


@dataclass(frozen=True)
class EntityFilters:
    """What the table shows; every field comes from the page's query string."""

    q: str = ""
    types: tuple[str, ...] = ()
    state: str = EntityState.ACTIVE
    curated: Curated = ""
    min_degree: int | None = None
    source_id: int | None = None
    sort: SortColumn = "name"
    descending: bool = False


@dataclass
class EntityPage:
    """One page of the table: its rows, the total matching, and where it is."""

    rows: list[Entity]
    total: int
    number: int
    page_size: int = PAGE_SIZE

    @property
    def num_pages(self) -> int:
        return max(1, min(MAX_PAGE, -(-self.total // self.page_size)))

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def has_next(self) -> bool:
        return self.number < self.num_pages

    @property
    def start_index(self) -> int:
        return (self.number - 1) * self.page_size + 1 if self.rows else 0

    @property
    def end_index(self) -> int:
        return (self.number - 1) * self.page_size + len(self.rows)


def _source_count() -> Func:
    return Func(F("source_ids"), function="cardinality", output_field=IntegerField())


def _ordering(filters: EntityFilters) -> list[str | OrderBy]:
    """The sort column first, then ties broken so every order is total (pages never
    overlap). Names sort by their canonical key (case, accents, articles and legal
    suffixes folded: "the Beatles" among the B's), read in order from `entity_ws_canon`,
    then by the name itself. Degree ties fall to mentions then id in the order
    `entity_ws_degree` keeps, so both directions read that index (forwards or backwards)
    instead of sorting."""
    down = filters.descending
    column = filters.sort

    def by(expression: F | Func, nulls: bool = False) -> OrderBy:
        if down:
            return expression.desc(nulls_last=True if nulls else None)
        return expression.asc(nulls_last=True if nulls else None)

    if column == "relevance" and filters.q:
        return [F("search_rank").asc(), F("degree").desc(), F("mention_count").desc(), "name",
                "pk"]  # fmt: skip
    if column == "degree":
        return [by(F("degree")), by(F("mention_count")), F("pk").desc() if down else "pk"]
    first = {
        "type": [by(F("type__name")), F("name").asc()],
        "mentions": [by(F("mention_count"))],
        "sources": [by(_source_count())],
        "first_seen": [by(F("first_seen_at"), nulls=True)],
        "last_seen": [by(F("last_seen_at"), nulls=True)],
    }.get(column, [by(F("canonical_name")), by(F("name"))])
    return [*first, F("pk").desc() if down else F("pk").asc()]


def entity_table(workspace: Workspace, filters: EntityFilters) -> QuerySet[Entity]:
    """Every entity of the workspace matching `filters`, in the table's order, each with
    its type and `source_count`."""
    entities = search_entities(
        workspace,
        q=filters.q or None,
        state=filters.state if filters.state in STATES else EntityState.ACTIVE,
        source_id=filters.source_id,
        min_degree=filters.min_degree,
    )
    if filters.types:
        entities = entities.filter(type__name__in=filters.types)
    if filters.curated:
        entities = entities.filter(curated=filters.curated == "yes")
    return (
        entities.defer("description", "aliases", "type_votes")
        .annotate(source_count=_source_count())
        .order_by(*_ordering(filters))
    )


def entity_table_page(workspace: Workspace, filters: EntityFilters, *, page: int = 1) -> EntityPage:
    """Page `page` (from 1; past the last, the last) of the table, and the total count."""
    entities = entity_table(workspace, filters)
    total = entities.order_by().count()
    result = EntityPage(rows=[], total=total, number=1)
    result.number = max(1, min(page, result.num_pages))
    offset = (result.number - 1) * PAGE_SIZE
    result.rows = list(entities[offset : offset + PAGE_SIZE])
    return result


# The export's columns, and the fields they are read from.
EXPORT_COLUMNS = ("id", "name", "type", "degree", "mentions", "sources", "first_seen",
                  "last_seen", "state", "curated")  # fmt: skip
_EXPORT_FIELDS = ("pk", "name", "type__name", "degree", "mention_count", "source_count",
                  "first_seen_at", "last_seen_at", "state", "curated")  # fmt: skip


def iter_entity_table(workspace: Workspace, filters: EntityFilters) -> Iterator[tuple[Any, ...]]:
    """All the table's rows as tuples of EXPORT_COLUMNS, read in batches (the CSV export):
    no model instances, so 100k rows cost little more than the query."""
    rows = entity_table(workspace, filters).values_list(*_EXPORT_FIELDS)
    return rows.iterator(chunk_size=5000)


def entities_by_id(workspace: Workspace, ids: Sequence[int]) -> dict[int, Entity]:
    """The workspace's entities among `ids` (in any state), with their types; an id of
    another workspace is simply absent."""
    return {
        entity.pk: entity
        for entity in Entity.objects.for_workspace(workspace)
        .filter(pk__in=list(ids))
        .select_related("type")
        .only("id", "name", "state", "type__name", "mention_count", "workspace_id")
    }
