"""Fixtures for ingestion tests: sources built through the real actions."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ingest.actions.sources import do_add_file, do_create_source
from ingest.embeddings import get_embedder
from ingest.models import Source


@pytest.fixture(autouse=True)
def media_root(tmp_path, settings):
    """Every test stores its uploaded blobs in its own directory."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def embedder():
    return get_embedder()


@pytest.fixture
def make_source(alice) -> Callable[..., Source]:
    """An upload source in alice's workspace holding the given {path: bytes} files."""

    def make(files: dict[str, bytes], *, name: str = "test source") -> Source:
        source = do_create_source(workspace=alice.workspace, kind="upload", name=name)
        for path, data in files.items():
            do_add_file(source=source, path=path, chunks=[data])
        return source

    return make


@pytest.fixture(autouse=True)
def ingest_stages_only(settings):
    """The ingest app's tests run its own stages: extraction (the knowledge app) embeds new
    entity names with the same model, which would blur the embedding counts these tests
    assert. The whole pipeline is exercised by tests/knowledge."""
    settings.INGEST_PIPELINE_STAGES = [
        stage for stage in settings.INGEST_PIPELINE_STAGES if stage.startswith("ingest.")
    ]
