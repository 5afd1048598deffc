"""A daemon thread that does one short piece of database work every `interval` seconds
beside django-tasks-db's worker loop, on its own connection (the worker's heartbeat and
its upkeep scheduler): a database hiccup is logged and retried at the next turn, never the
end of the worker."""

from __future__ import annotations

import logging
import threading

from django.db import DatabaseError, connection

logger = logging.getLogger(__name__)


class PeriodicThread(threading.Thread):
    # What a failed turn is logged as.
    failure = "Periodic work failed; retrying"

    def __init__(self, *, name: str, interval: float) -> None:
        super().__init__(name=name, daemon=True)
        self.interval = interval
        self._stop_event = threading.Event()

    def tick(self) -> None:
        raise NotImplementedError

    def run(self) -> None:
        try:
            while not self._stop_event.is_set():
                try:
                    self.tick()
                except DatabaseError:
                    logger.exception(self.failure)
                    connection.close()
                self._stop_event.wait(self.interval)
        finally:
            connection.close()

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=self.interval + 5)
