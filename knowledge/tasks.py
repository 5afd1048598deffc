"""Background tasks of the knowledge app: ids in, reload, tolerate deletion, call an action."""

from __future__ import annotations

from django.tasks import task

from ingest.models import Source
from knowledge.actions.ask import do_write_community_summaries
from knowledge.actions.communities import do_compute_communities
from knowledge.actions.extraction.documents import do_extract_source
from system.llm.client import LlmError
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
    """Recompute a workspace's communities (after a large ingest or on a schedule), then,
    with an LLM, rewrite the summaries of those whose members changed (global answers)."""
    workspace = Workspace.objects.filter(pk=workspace_id).first()
    if workspace is None:
        return "missing"
    report = do_compute_communities(workspace=workspace)
    outcome = f"{report.communities} communities over {report.entities} entities"
    try:
        refresh = do_write_community_summaries(workspace=workspace)
    except LlmError as error:
        return f"{outcome}; summaries failed: {error}"
    if refresh is not None:
        outcome += f"; {refresh.written} summaries written, {refresh.kept} kept"
    return outcome
