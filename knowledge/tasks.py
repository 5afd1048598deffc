"""Background tasks of the knowledge app: ids in, reload, tolerate deletion, call an action."""

from __future__ import annotations

from django.tasks import task

from ingest.models import Source
from knowledge.actions.extraction import do_extract_source


@task
def extract_source(source_id: int, force: bool = False) -> str:
    source = Source.objects.filter(pk=source_id).first()
    if source is None:
        return "missing"
    report = do_extract_source(source=source, force=force)
    return report.error or "ok"
