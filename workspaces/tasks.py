"""Background tasks of the workspaces app: ids in, reload, tolerate deletion, call an action."""

from __future__ import annotations

from django.tasks import task

from workspaces.actions.workspaces import do_delete_workspace


@task
def delete_workspace(workspace_id: int) -> bool:
    return do_delete_workspace(workspace_id=workspace_id)
