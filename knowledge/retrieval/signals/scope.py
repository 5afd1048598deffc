"""Which documents a search reads: the `sources`, ingestion-date and document-date
(`published_from` / `published_to`) filters as SQL, shared by the vector and keyword
signals (both read ingest_chunk under an alias) and the graph signal (which reaches chunks
through mentions)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any


@dataclass(frozen=True, slots=True)
class DocumentScope:
    """The documents of some sources, and/or those ingested within [ingested_from,
    ingested_to], and/or those whose own date (Document.published_at) falls within
    [published_from, published_to] (whole days, UTC, inclusive; a document without a date
    is outside any publication range); everything when all are None."""

    source_ids: list[int] | None = None
    ingested_from: date | None = None
    ingested_to: date | None = None
    published_from: date | None = None
    published_to: date | None = None

    @property
    def restricted(self) -> bool:
        return bool(self.source_ids) or any(
            day is not None
            for day in (
                self.ingested_from,
                self.ingested_to,
                self.published_from,
                self.published_to,
            )
        )

    def conditions(self, document: str, params: list[Any]) -> str:
        """ " AND ..." over the ingest_document alias `document`, parameters appended."""
        sql = ""
        if self.source_ids:
            sql += f" AND {document}.source_id = ANY(%s)"
            params.append(self.source_ids)
        sql += _day_range(f"{document}.created_at", self.ingested_from, self.ingested_to, params)
        sql += _day_range(
            f"{document}.published_at", self.published_from, self.published_to, params
        )
        return sql


def _day_range(column: str, start: date | None, end: date | None, params: list[Any]) -> str:
    """ " AND column within [start, end]" (whole UTC days), parameters appended."""
    sql = ""
    if start is not None:
        sql += f" AND {column} >= %s"
        params.append(datetime.combine(start, time.min, tzinfo=UTC))
    if end is not None and end < date.max:  # the last day there is bounds nothing
        sql += f" AND {column} < %s"
        params.append(datetime.combine(end + timedelta(days=1), time.min, UTC))
    return sql


def scope_clause(alias: str, scope: DocumentScope | None, params: list[Any]) -> str:
    """ " AND the chunk <alias> is in a document of the scope" with its parameters appended
    to `params`, or "" when the search is not restricted."""
    if scope is None or not scope.restricted:
        return ""
    inner: list[Any] = []
    conditions = scope.conditions("d", inner)
    params.extend(inner)
    return (
        f" AND {alias}.document_id IN (SELECT d.id FROM ingest_document d "  # noqa: S608
        f"WHERE d.workspace_id = {alias}.workspace_id{conditions})"
    )
