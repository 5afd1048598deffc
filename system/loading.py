"""Load things once per process, on first use: models, and code named in settings.

Models (the embedding model, the offline extractor's spaCy pipeline) take seconds and
hundreds of MB to load, and a broken install fails the same way every time: each is loaded
on first use, under a lock (two threads asking at once load it once), and a failure is
remembered and raised again without retrying, until `reset()` (tests, or a changed setting
in a long-lived process).

Code named by dotted path in a settings list (pipeline stages, deletion hooks) is imported
the way Django imports middleware: lazily, once per distinct list, so the app that owns the
list never imports the apps that fill it.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Hashable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)


class LoadOnce[T]:
    """`get(key)` returns what `load()` made for that key (a setting's value, so a changed
    setting loads anew), or raises the remembered `unavailable` error."""

    def __init__(self, load: Callable[[], T], *, unavailable: type[Exception], label: str) -> None:
        self._load = load
        self._unavailable = unavailable
        self._label = label
        self._state: dict[Hashable, T | Exception] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> T:
        with self._lock:
            if key not in self._state:
                try:
                    self._state[key] = self._load()
                    logger.info("Loaded %s %s", self._label, self._state[key])
                except self._unavailable as exc:
                    logger.warning("%s unavailable: %s", self._label.capitalize(), exc)
                    self._state[key] = exc
            value = self._state[key]
        if isinstance(value, self._unavailable):
            raise value
        return value  # type: ignore[return-value]

    def reset(self) -> None:
        with self._lock:
            self._state.clear()


@cache
def _import_all(paths: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(import_string(path) for path in paths)


def import_paths(paths: Iterable[str]) -> tuple[Any, ...]:
    """The objects named by `paths` (a settings list of dotted paths), in order; imported
    on the first call with this list, remembered after."""
    return _import_all(tuple(paths))


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file, read a MiB at a time: how packaged model weights are checked
    against the digests they ship with before they are loaded."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
