"""Refresh intervals as people write them: "30m", "6h", "1d", "2w", or a number of seconds.

Pure (no Django): `parse_duration` reads one, `format_duration` writes one back in its
largest whole unit, so what a person typed ("1d") is what the screens show again. The
bounds a source's interval must keep (CRAWL_REFRESH_MIN_SECONDS) are the caller's
(ingest/actions/crawl/request.py).
"""

from __future__ import annotations

import re

UNITS = {"w": 7 * 24 * 3600, "d": 24 * 3600, "h": 3600, "m": 60, "s": 1}
# Longer intervals are refused: a typo ("1000w") must not make a schedule that never runs.
MAX_SECONDS = 366 * 24 * 3600
# What turns a schedule off when written instead of a duration.
OFF_WORDS = frozenset({"0", "off", "never", "none"})
EXPECTED = "a duration like 30m, 6h, 1d or 2w (or a whole number of seconds)"

_DURATION = re.compile(r"(\d{1,9})\s*([wdhms]?)")


class DurationError(ValueError):
    """The text is no duration; the message says what is expected (no field name)."""


def parse_duration(value: object) -> int:
    """Seconds of `value`: an int (seconds), or text "<n><unit>" with unit w, d, h, m or
    s (none: seconds); 0 for "0", "off", "never" or "none". Raises DurationError."""
    if isinstance(value, bool):
        raise DurationError(f"expected {EXPECTED}; got {value!r}.")
    if isinstance(value, int):
        seconds = value
    elif isinstance(value, str):
        text = value.strip().lower()
        if text in OFF_WORDS:
            return 0
        found = _DURATION.fullmatch(text)
        if found is None:
            raise DurationError(f"expected {EXPECTED}; got {value[:40]!r}.")
        seconds = int(found.group(1)) * UNITS[found.group(2) or "s"]
    else:
        raise DurationError(f"expected {EXPECTED}; got {type(value).__name__}.")
    if seconds < 0:
        raise DurationError(f"expected {EXPECTED}; got a negative number.")
    if seconds > MAX_SECONDS:
        raise DurationError(f"at most {format_duration(MAX_SECONDS)} (366 days).")
    return seconds


def format_duration(seconds: int) -> str:
    """`seconds` in the largest unit that divides it: 86400 -> "1d", 5400 -> "90m"."""
    for unit, size in UNITS.items():
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
