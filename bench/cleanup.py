"""Removing a benchmark's workspace: entities protect their types, and the ORM's cascade
would load every row first, so the knowledge tables are emptied in SQL, in dependency
order, and the rest goes with the workspace."""

from __future__ import annotations

from django.db import connection

from workspaces.models import Workspace

TABLES = [
    "knowledge_mergesuggestion",
    "knowledge_curationrule",
    "knowledge_alias",
    "knowledge_curationevent",
    "knowledge_mention",
    "knowledge_relationevidence",
    "knowledge_relation",
    "knowledge_entity",
]


def drop_workspace(workspace: Workspace) -> None:
    with connection.cursor() as cursor:
        for table in TABLES:
            cursor.execute(f"DELETE FROM {table} WHERE workspace_id = %s", [workspace.pk])  # noqa: S608
    workspace.delete()
