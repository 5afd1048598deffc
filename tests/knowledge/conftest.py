"""Fixtures for knowledge tests: a scripted OpenAI-compatible server wired into settings,
and sources ingested inline through the real pipeline."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ingest.actions.sources import do_create_text_source, validate_source_options
from ingest.models import Source
from knowledge.extraction.extractors import reset_extractor
from tests.llm_server import ScriptedLLM, World, is_glean, window_text
from tests.support import run_pending

__all__ = ["World", "is_glean", "window_text"]


@pytest.fixture(autouse=True)
def media_root(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def llm(settings) -> Iterator[ScriptedLLM]:
    """A running scripted server that the configured extractor talks to."""
    with ScriptedLLM() as server:
        settings.LLM_BASE_URL = server.base_url
        settings.LLM_MODEL = "scripted-model"
        settings.LLM_API_KEY = "sk-test-secret"
        settings.LLM_RETRY_BASE_DELAY = 0.01
        settings.LLM_RETRY_MAX_DELAY = 0.05
        settings.LLM_TIMEOUT = 5.0
        settings.EXTRACTION_OFFLINE = False
        reset_extractor()
        yield server
    reset_extractor()


@pytest.fixture
def ingest_text(alice) -> Callable[..., Source]:
    """A text source in alice's workspace, processed inline through every pipeline stage."""

    def ingest(text: str, *, title: str = "notes", **options: Any) -> Source:
        source, _ = do_create_text_source(
            workspace=alice.workspace,
            title=title,
            text=text,
            options=validate_source_options(**options),
        )
        run_pending(source)
        source.refresh_from_db()
        return source

    return ingest
