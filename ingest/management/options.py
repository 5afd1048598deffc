"""Command-line options every app's commands share about sources."""

from __future__ import annotations

from django.core.management.base import CommandError

from ingest.models import Source
from ingest.selectors import get_source_for_workspace
from workspaces.errors import NotFound
from workspaces.models import Workspace


def source_for_command(workspace: Workspace, source_id: int | None) -> Source | None:
    """The source a `--source ID` option names in the workspace (None without the option);
    one of another workspace, or none at all, is a usage error (exit code 2)."""
    if source_id is None:
        return None
    try:
        return get_source_for_workspace(workspace, source_id)
    except NotFound as exc:
        raise CommandError(exc.message, returncode=2) from exc
