"""The lifecycle shared by the tests' real local servers (a website, a chat-completions
API): serve from a daemon thread, stop promptly, usable as a context manager."""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import Self


class BackgroundServer:
    """Subclasses create `self._server` (bound to 127.0.0.1, port 0) in `__init__` after
    calling `super().__init__(name=...)`; handlers may wait on `self._stopping`."""

    _server: ThreadingHTTPServer

    def __init__(self, *, name: str) -> None:
        self._name = name
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> Self:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.02},
                name=f"{self._name}-{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop promptly: handlers waiting on `_stopping` wake up and drop their connection."""
        self._stopping.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
