"""The `sources` filter of a search as SQL, shared by the vector and keyword signals (both
read ingest_chunk under an alias; the graph signal filters mentions its own way)."""

from __future__ import annotations

from typing import Any


def source_clause(alias: str, source_ids: list[int] | None, params: list[Any]) -> str:
    """ " AND <alias> belongs to one of the sources" with its parameter appended to
    `params`, or "" when the search is not restricted."""
    if not source_ids:
        return ""
    params.append(source_ids)
    return (
        f" AND {alias}.document_id IN (SELECT id FROM ingest_document "  # noqa: S608
        f"WHERE workspace_id = {alias}.workspace_id AND source_id = ANY(%s))"
    )
