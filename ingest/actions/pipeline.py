"""Run one document through the pipeline stages named in INGEST_PIPELINE_STAGES."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cache

from django.conf import settings
from django.utils.module_loading import import_string

from ingest.actions.sources import PENDING, do_refresh_source_progress
from ingest.models import Document, DocumentStatus, Source, SourceStatus
from ingest.parsers.base import ParseError

logger = logging.getLogger(__name__)

Stage = Callable[..., None]


@cache
def _load_stages(paths: tuple[str, ...]) -> tuple[tuple[str, Stage], ...]:
    return tuple((path.rsplit(".", 1)[-1], import_string(path)) for path in paths)


def pipeline_stages() -> tuple[tuple[str, Stage], ...]:
    """(name, callable) of each configured stage, imported once, lazily (like middleware)."""
    return _load_stages(tuple(settings.INGEST_PIPELINE_STAGES))


def do_process_document(*, document_id: int) -> str:
    """Take one document as far as it can go; returns its final status.

    Safe to run again at any time (a retry, a resumed task after a worker was killed, two
    workers racing): every stage skips what is done. A document of a cancelled or deleted
    source is left alone; a file the parsers refuse fails with the parser's message; an
    unexpected error fails the document (logged), never the worker.
    """
    document = Document.objects.select_related("source").filter(pk=document_id).first()
    if document is None:
        return "missing"
    if document.status in {DocumentStatus.DONE, DocumentStatus.FAILED, DocumentStatus.CANCELLED}:
        do_refresh_source_progress(source_id=document.source_id)
        return str(document.status)
    stage_name = ""
    try:
        for stage_name, stage in pipeline_stages():
            status = (
                Source.objects.filter(pk=document.source_id)
                .values_list("status", flat=True)
                .first()
            )
            if status in {None, SourceStatus.CANCELLED, SourceStatus.DELETING}:
                Document.objects.filter(pk=document.pk, status__in=PENDING).update(
                    status=DocumentStatus.CANCELLED
                )
                return "cancelled"
            Source.objects.filter(pk=document.source_id).update(stage=stage_name)
            stage(document=document)
        document.status = DocumentStatus.DONE
        document.save(update_fields=["status", "updated_at"])
    except ParseError as exc:
        _fail(document, exc.message)
    except Exception as exc:
        logger.exception("Document %s failed in stage %s", document.pk, stage_name)
        _fail(
            document,
            f"Internal error while {stage_name or 'starting'}: {exc.__class__.__name__}: {exc}"[
                :2000
            ],
        )
    finally:
        do_refresh_source_progress(source_id=document.source_id)
    return str(document.status)


def _fail(document: Document, message: str) -> None:
    document.status = DocumentStatus.FAILED
    document.error = message
    Document.objects.filter(pk=document.pk).update(status=DocumentStatus.FAILED, error=message)
