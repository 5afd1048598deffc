"""A document's own date: when its bytes or what carried them say it was written or last
changed (HTML metadata, PDF and DOCX properties, an HTTP Last-Modified header, a file's
modification time).

Every value is hostile input. Strings are parsed strictly: ISO 8601, which is what the
metadata standards write (meta tags, JSON-LD, `<time datetime>`, Dublin Core), and the HTTP
date formats (RFC 9110) for headers and the pages that put one in a meta tag; anything else
is no date, never a guess. A date is kept only when it is sane: after 1970-01-02 (the epoch
itself, or a time zone away from it, is the placeholder of zip tools and reproducible
builds, not a date) and no more than a day ahead of now (clocks and time zones differ, a
week-ahead "published" date does not happen). Dates without a time zone are taken as UTC;
a day alone is its midnight UTC. Python's `datetime.fromisoformat` reads every ISO form the
standards use (since 3.11) and Django's `parse_http_date` the three HTTP ones, so no date
library is needed (none is a dependency of ours).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from django.utils.http import parse_http_date

# Where Document.published_at came from (Document.published_source); "" when it has none.
PUBLISHED_SOURCES = ("http", "html", "pdf", "docx", "file")
# The sources that read the document's own bytes: a duplicate of its content takes the
# original's date from one of them (the content states it), never from another carrier.
CONTENT_SOURCES = frozenset({"html", "pdf", "docx"})

EARLIEST = datetime(1970, 1, 2, tzinfo=UTC)
FUTURE_SLACK = timedelta(days=1)
# No date string is longer ("2024-03-05T10:00:00.123456+01:00" is 32 characters).
_MAX_CHARS = 64
# The parsed metadata keys a document's own date is read from (ISO 8601 strings).
DATE_KEYS = ("modified", "published", "created")


def sane(value: datetime | None, *, now: datetime | None = None) -> datetime | None:
    """`value` in UTC when it is a plausible date of a document (see the module
    docstring), else None."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        value = value.astimezone(UTC)
    except (OverflowError, ValueError):  # year 1 or 9999 a few hours off the end
        return None
    current = now or datetime.now(UTC)
    if value < EARLIEST or value > current + FUTURE_SLACK:
        return None
    return value


def parse_date(text: object, *, now: datetime | None = None) -> datetime | None:
    """A date from an ISO 8601 string or an HTTP date, when sane; None otherwise."""
    if not isinstance(text, str):
        return None
    text = text.strip()
    if not text or len(text) > _MAX_CHARS:
        return None
    parsed: datetime | None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        parsed = _http_date(text)
    return sane(parsed, now=now)


def parse_http_header(text: object, *, now: datetime | None = None) -> datetime | None:
    """An HTTP date header (Last-Modified), when sane."""
    if not isinstance(text, str) or len(text) > _MAX_CHARS:
        return None
    return sane(_http_date(text.strip()), now=now)


def from_timestamp(seconds: float | None, *, now: datetime | None = None) -> datetime | None:
    """A POSIX timestamp in seconds (a file's mtime), when sane."""
    if seconds is None:
        return None
    try:
        value = datetime.fromtimestamp(float(seconds), UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return sane(value, now=now)


def iso(value: datetime | None) -> str | None:
    """The JSON-safe form the parsers put in a document's metadata."""
    return value.isoformat() if value is not None else None


def latest(values: Iterable[datetime | None], *, now: datetime | None = None) -> datetime | None:
    """The latest sane one of `values` (the document's last change it states), or None."""
    kept = [v for v in (sane(value, now=now) for value in values) if v is not None]
    return max(kept) if kept else None


def own_date(metadata: Mapping[str, Any], *, now: datetime | None = None) -> datetime | None:
    """The date a parsed document states about itself: the latest sane one of its
    metadata's `modified`, `published` and `created` (ISO 8601 strings written by the
    parsers), or None."""
    return latest((parse_date(metadata.get(key), now=now) for key in DATE_KEYS), now=now)


def _http_date(text: str) -> datetime | None:
    try:
        return datetime.fromtimestamp(parse_http_date(text), UTC)
    except (OverflowError, OSError, ValueError):
        return None
