"""Graph backends, configured like Django's CACHES: `GRAPH_BACKENDS = {"default": {"BACKEND":
"knowledge.graph.postgres.PostgresGraphBackend", "OPTIONS": {...}}}`. Loaded lazily on first
use (never at import time); `get_graph_backend()` is the default one. See base.py for the
contract every backend meets."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured
from django.utils.connection import BaseConnectionHandler
from django.utils.module_loading import import_string

from knowledge.graph.base import GraphBackend


class InvalidGraphBackendError(ImproperlyConfigured):
    pass


class GraphBackendHandler(BaseConnectionHandler[GraphBackend]):
    settings_name = "GRAPH_BACKENDS"
    exception_class = InvalidGraphBackendError

    def create_connection(self, alias: str) -> GraphBackend:
        params = self.settings[alias]
        try:
            backend_class = import_string(params["BACKEND"])
        except (ImportError, KeyError) as exc:
            raise InvalidGraphBackendError(
                f"GRAPH_BACKENDS[{alias!r}]: cannot load BACKEND {params.get('BACKEND')!r}: {exc}"
            ) from exc
        return backend_class(alias, dict(params.get("OPTIONS", {})))


graph_backends = GraphBackendHandler()


def get_graph_backend(alias: str = "default") -> GraphBackend:
    return graph_backends[alias]
