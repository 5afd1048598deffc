"""Fixtures for the MCP server's tests: a small harbour corpus ingested through the real
pipeline (extraction by a scripted OpenAI-compatible model that knows its names), and the
official MCP client connected to the Django live server over streamable HTTP with a
member's bearer token. Nothing of ours is mocked."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from ingest.actions.sources import do_create_text_source
from ingest.models import Source
from knowledge.extraction.extractors import reset_extractor
from knowledge.models import Entity
from tests.conftest import Member
from tests.llm_server import ScriptedLLM, World
from tests.support import run_pending

CRANE = (
    "The harbour log covers the spring season. Crane 7 was repaired by Mirela Ostrova in "
    "March after its winch failed. The Harbour Authority paid for the new winch."
)
WEATHER = "Fog closed the northern channel for three days. Ships waited at the outer buoy."
WORLD = World(
    entities={
        "Mirela Ostrova": "person",
        "Crane 7": "product",
        "Harbour Authority": "organization",
    },
    relations=[
        ("Mirela Ostrova", "Crane 7", "related_to"),
        ("Harbour Authority", "Crane 7", "related_to"),
    ],
)


@pytest.fixture(autouse=True)
def media_root(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def llm(settings) -> Iterator[ScriptedLLM]:
    """A running scripted model the extractor and `ask` talk to."""
    with ScriptedLLM() as server:
        settings.LLM_BASE_URL = server.base_url
        settings.LLM_MODEL = "scripted-model"
        settings.LLM_API_KEY = "sk-test-secret"
        settings.LLM_RETRY_BASE_DELAY = 0.01
        settings.LLM_RETRY_MAX_DELAY = 0.05
        settings.LLM_TIMEOUT = 5.0
        settings.EXTRACTION_OFFLINE = False
        server.responder = WORLD
        reset_extractor()
        yield server
    reset_extractor()


@dataclass
class Corpus:
    crane: Source
    weather: Source
    entities: dict[str, int]  # name -> id


def ingest(member: Member, text: str, title: str) -> Source:
    source, _ = do_create_text_source(workspace=member.workspace, title=title, text=text)
    run_pending(source)
    source.refresh_from_db()
    return source


@pytest.fixture
def corpus(alice, llm) -> Corpus:
    """Two documents in alice's workspace, their entities and relations extracted."""
    crane = ingest(alice, CRANE, "Harbour log")
    weather = ingest(alice, WEATHER, "Weather notes")
    entities = dict(Entity.objects.for_workspace(alice.workspace).values_list("name", "pk"))
    assert set(WORLD.entities) <= set(entities), entities
    llm.clear_requests()
    return Corpus(crane=crane, weather=weather, entities=entities)


@asynccontextmanager
async def mcp_client(url: str, token: str | None, **options: Any) -> AsyncIterator[Client]:
    """The official client on streamable HTTP, authenticated with `token`. The HTTP client
    is closed with it (the transport leaves a client it was given open), so the live
    server's request threads end and give back their database connections."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with create_mcp_http_client(headers=headers) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, cache=None, **options) as client:
            yield client


@pytest.fixture
def mcp_url(live_server) -> str:
    return f"{live_server.url}/mcp/"


@pytest.fixture
def session(mcp_url) -> Callable[..., Any]:
    """`session(member, fn)`: run `await fn(client)` with a client connected as `member`."""

    def run(member: Member, fn: Callable[[Client], Awaitable[Any]], **options: Any) -> Any:
        async def main() -> Any:
            async with mcp_client(mcp_url, member.plaintext, **options) as client:
                return await fn(client)

        return anyio.run(main)

    return run


def call(session: Callable[..., Any], member: Member, tool: str, arguments: dict[str, Any]):
    """One tool call as `member`; the CallToolResult."""

    async def fn(client: Client) -> Any:
        return await client.call_tool(tool, arguments)

    return session(member, fn)
