"""Politeness: per-host spacing of requests, shared by all crawl threads.

Several workers crawl at once, often the same site; without coordination they would hit it
in bursts. Each host gets a schedule of request slots: a caller reserves the next free slot
under a lock and sleeps outside it, so threads never queue on the lock itself and
consecutive requests to one host start at least the configured interval apart.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

# Requests start this much further apart than the rate says: the server stamps arrivals, and
# a millisecond of network jitter between two exactly spaced starts would otherwise show it
# rate + 1 requests in some one-second window.
SAFETY_MARGIN = 1.02


class HostRateLimiter:
    """Spaces the starts of requests to the same host by `1 / rate_per_second` seconds, or by
    a longer `min_interval` (robots.txt's Crawl-delay) given per call; `defer` pushes a host
    back after a 429/503 with Retry-After. `rate_per_second` None or <= 0 means no limit.
    `clock` and `sleep` are the monotonic clock and the way to wait on it (tests pass a fake
    pair, so spacing is checked exactly and without waiting)."""

    def __init__(
        self,
        *,
        rate_per_second: float | None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        self.interval = 1.0 / rate_per_second if rate_per_second and rate_per_second > 0 else 0.0
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._last_start: dict[str, float] = {}  # the latest reserved slot per host
        self._not_before: dict[str, float] = {}  # from defer()

    def wait(self, host: str, *, min_interval: float | None = None) -> None:
        """Block until a request to `host` may start, and count it as started then."""
        delay = self.reserve(host, min_interval=min_interval) - self._clock()
        if delay > 0:
            self._sleep(delay)

    def reserve(self, host: str, *, min_interval: float | None = None) -> float:
        """Reserve the next slot for `host` without sleeping; returns its monotonic time
        (for callers that would rather schedule other work than block)."""
        interval = max(self.interval, min_interval or 0.0) * SAFETY_MARGIN
        key = host.lower()
        with self._lock:
            now = self._clock()
            slot = now
            last = self._last_start.get(key)
            if last is not None:
                slot = max(slot, last + interval)
            not_before = self._not_before.get(key)
            if not_before is not None:
                slot = max(slot, not_before)
                if not_before <= now:  # spent; hosts seen once must not pile up here
                    del self._not_before[key]
            self._last_start[key] = slot
            return slot

    def defer(self, host: str, seconds: float) -> None:
        """No request to `host` starts earlier than `seconds` from now."""
        key = host.lower()
        with self._lock:
            until = self._clock() + max(0.0, seconds)
            self._not_before[key] = max(self._not_before.get(key, until), until)

    def next_slot(self, host: str) -> float:
        """Monotonic time of the earliest start still possible for `host` at the base rate."""
        key = host.lower()
        with self._lock:
            now = self._clock()
            last = self._last_start.get(key)
            slot = now if last is None else max(now, last + self.interval)
            return max(slot, self._not_before.get(key, now))
