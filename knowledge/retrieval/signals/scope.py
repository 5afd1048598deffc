"""Which documents a search reads: the `sources` and ingestion-date filters as SQL, shared
by the vector and keyword signals (both read ingest_chunk under an alias) and the graph
signal (which reaches chunks through mentions)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any


@dataclass(frozen=True, slots=True)
class DocumentScope:
    """The documents of some sources, and/or those ingested within [ingested_from,
    ingested_to] (whole days, UTC, inclusive); everything when all are None."""

    source_ids: list[int] | None = None
    ingested_from: date | None = None
    ingested_to: date | None = None

    @property
    def restricted(self) -> bool:
        return (
            bool(self.source_ids)
            or self.ingested_from is not None
            or (self.ingested_to is not None)
        )

    def conditions(self, document: str, params: list[Any]) -> str:
        """ " AND ..." over the ingest_document alias `document`, parameters appended."""
        sql = ""
        if self.source_ids:
            sql += f" AND {document}.source_id = ANY(%s)"
            params.append(self.source_ids)
        if self.ingested_from is not None:
            sql += f" AND {document}.created_at >= %s"
            params.append(datetime.combine(self.ingested_from, time.min, tzinfo=UTC))
        if self.ingested_to is not None:
            sql += f" AND {document}.created_at < %s"
            params.append(datetime.combine(self.ingested_to + timedelta(days=1), time.min, UTC))
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
