"""Query parameters the read endpoints share: pagination bounds, the state filter, times
in UTC.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Literal

from ninja import Field
from ninja.pagination import LimitOffsetPagination

from workspaces.errors import InvalidInput
from workspaces.models import MAX_ID

MAX_PAGE = 500


StateFilter = Literal["active", "merged", "deleted"]


class Pagination(LimitOffsetPagination):
    """limit 1..500 (default 100), offset from 0; answers {"items": [...], "count": n}."""

    class Input(LimitOffsetPagination.Input):
        limit: int = Field(100, ge=1, le=MAX_PAGE)
        offset: int = Field(0, ge=0, le=MAX_ID)


def utc(value: datetime | None, *, label: str) -> datetime | None:
    """In UTC (naive means UTC): any offset ISO 8601 allows then reaches the database as
    one it accepts (PostgreSQL refuses offsets beyond ±15:59)."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise InvalidInput(f"{label}: out of range.") from None


def day_bound(value: str | None, *, label: str, end: bool) -> datetime | None:
    """`YYYY-MM-DD` (or a full ISO 8601 time) to an aware time; a bare day as an upper
    bound means up to the end of that day, so a one-day range finds that day's entities."""
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
