"""Background tasks of the knowledge app: ids in, reload, tolerate deletion, call an action."""

from __future__ import annotations

from django.tasks import task

from ingest.models import Source
from knowledge.actions.communities import do_compute_communities
from knowledge.actions.extraction.documents import do_extract_source
from workspaces.models import Workspace


@task
def extract_source(source_id: int, force: bool = False) -> str:
    source = Source.objects.filter(pk=source_id).first()
    if source is None:
        return "missing"
    report = do_extract_source(source=source, force=force)
    return report.error or "ok"


@task
def compute_communities(workspace_id: int) -> str:
    """Recompute a workspace's communities (after a large ingest or on a schedule)."""
    workspace = Workspace.objects.filter(pk=workspace_id).first()
    if workspace is None:
        return "missing"
    report = do_compute_communities(workspace=workspace)
    return f"{report.communities} communities over {report.entities} entities"
