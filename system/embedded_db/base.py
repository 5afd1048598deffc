"""DatabaseWrapper that starts the embedded server lazily; see the package docstring."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.db.backends.postgresql import base, client

from system import embedded_postgres

# Databases this process has already made sure exist (CREATE DATABASE once, not per connection).
_ensured_databases: set[tuple[Path, str]] = set()


def resolve_embedded(settings_dict: dict[str, Any]) -> embedded_postgres.EmbeddedServer:
    """Start or attach to the server for these settings and point HOST/PORT at it."""
    pgdata = Path(settings_dict["OPTIONS"]["pgdata"])
    server = embedded_postgres.ensure_server(pgdata)
    settings_dict["HOST"] = str(server.socket_dir)
    settings_dict["PORT"] = str(server.port)
    name = settings_dict.get("NAME")
    if name and name != embedded_postgres.SUPERUSER and (pgdata, name) not in _ensured_databases:
        embedded_postgres.ensure_database(server, name)
        _ensured_databases.add((pgdata, name))
    return server


class DatabaseClient(client.DatabaseClient):
    """`manage.py dbshell` with the bundled psql (same major version as the server)."""

    @classmethod
    def settings_to_cmd_args_env(
        cls, settings_dict: dict[str, Any], parameters: Iterable[str]
    ) -> tuple[list[str], dict[str, str] | None]:
        server = resolve_embedded(settings_dict)
        args, env = super().settings_to_cmd_args_env(settings_dict, parameters)
        args[0] = str(server.bin_dir / "psql")
        return args, env


class DatabaseWrapper(base.DatabaseWrapper):
    client_class = DatabaseClient

    def get_connection_params(self) -> dict[str, Any]:
        resolve_embedded(self.settings_dict)
        params = super().get_connection_params()
        params.pop("pgdata", None)
        return params
