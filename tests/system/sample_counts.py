"""Health counts for tests of the HEALTH_COUNTS seam (system/selectors.py)."""

from __future__ import annotations

from django.db import connection


def slow_count() -> dict[str, int]:
    """A count the database takes a second over: past any test's time budget."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_sleep(1)")
        return {"slow": cursor.fetchone()[0]}
