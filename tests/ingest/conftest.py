"""Fixtures for ingestion tests: sources built through the real actions."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.conf import settings

from ingest.actions.pipeline import do_process_documents
from ingest.actions.sources import PENDING, do_add_file, do_create_source
from ingest.embeddings import get_embedder
from ingest.models import Document, Source


@pytest.fixture(autouse=True)
def media_root(tmp_path, settings):
    """Every test stores its uploaded blobs in its own directory."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def embedder():
    return get_embedder()


def run_pending(source: Source) -> list[str]:
    """Process the source's pending documents in this process, in the groups a worker gets."""
    ids = list(
        Document.objects.filter(source=source, status__in=PENDING).values_list("pk", flat=True)
    )
    size = settings.INGEST_DOCUMENTS_PER_TASK
    return [
        s
        for i in range(0, len(ids), size)
        for s in do_process_documents(document_ids=ids[i : i + size])
    ]


@pytest.fixture
def make_source(alice) -> Callable[..., Source]:
    """An upload source in alice's workspace holding the given {path: bytes} files."""

    def make(files: dict[str, bytes], *, name: str = "test source") -> Source:
        source = do_create_source(workspace=alice.workspace, kind="upload", name=name)
        for path, data in files.items():
            do_add_file(source=source, path=path, chunks=[data])
        return source

    return make
