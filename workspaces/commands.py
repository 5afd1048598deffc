"""Helpers shared by management commands of every app."""

from __future__ import annotations

from django.core.management.base import CommandError

from workspaces.models import Workspace


def workspace_for_command(slug: str) -> Workspace:
    """The workspace a `--workspace SLUG` option names; an unknown slug is a usage error
    (exit code 2), said the same way by every command."""
    workspace = Workspace.objects.filter(slug=slug).first()
    if workspace is None:
        raise CommandError(f"Workspace {slug!r} not found.", returncode=2)
    return workspace
