"""Fixtures for asking: a small harbour corpus ingested through the real pipeline, and a
scripted model that answers as the prompt's passages allow (it finds the passage holding
a phrase and cites its number, the way a real model reads the blocks)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from ingest.models import Source
from tests.llm_server import Reply, ScriptedLLM, World

CRANE = (
    "The harbour log covers the spring season. Crane 7 was repaired by Mirela Ostrova in "
    "March after its winch failed. The tugboats were repainted in April."
)
WEATHER = "Fog closed the northern channel for three days. Ships waited at the outer buoy."

PASSAGE = re.compile(r"<<<PASSAGE (\d+)>>>\n\(from: [^\n]*\)\n(.*?)\n<<<END PASSAGE \1>>>", re.S)


def passages_in(body: dict[str, Any]) -> dict[int, str]:
    """The numbered passages of an answer request, as the model sees them."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return {int(n): text for n, text in PASSAGE.findall(user)}


def system_of(body: dict[str, Any]) -> str:
    return next((m["content"] for m in body["messages"] if m["role"] == "system"), "")


@pytest.fixture
def corpus(llm: ScriptedLLM, ingest_text: Callable[..., Source]) -> dict[str, Source]:
    """Two documents in alice's workspace (extraction by a model that knows its names)."""
    world = World(
        entities={"Mirela Ostrova": "person", "Crane 7": "product"},
        relations=[("Mirela Ostrova", "Crane 7", "related_to")],
    )
    llm.responder = world
    sources = {"crane": ingest_text(CRANE, title="Harbour log"), "weather": ingest_text(WEATHER)}
    llm.clear_requests()
    return sources


def citing(phrase: str, claim: str) -> Callable[[dict[str, Any]], Reply]:
    """A model answering `claim [n]` with n the passage holding `phrase`."""

    def respond(body: dict[str, Any]) -> Reply:
        numbers = [n for n, text in passages_in(body).items() if phrase in text]
        return Reply(content=f"{claim} [{numbers[0]}]." if numbers else "No passage.")

    return respond


def answer_requests(llm: ScriptedLLM) -> list[Any]:
    return [r for r in llm.chat_requests if "numbered passages" in system_of(r.body)]
