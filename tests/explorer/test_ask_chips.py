"""The Ask page's entity chips: the entities the question names (a whole name or alias,
specific enough to seed the graph) and those the first passages are about, never an
entity the question only matches loosely (one common word of it that a name's canonical
key equates)."""

from __future__ import annotations

import re

import pytest

from ingest.actions.sources import do_create_text_source, validate_source_options
from tests.knowledge.conftest import llm  # noqa: F401 (the scripted extraction server)
from tests.llm_server import World
from tests.support import run_pending, signed_in
from workspaces.models import Role

pytestmark = pytest.mark.django_db

QUESTION = "How does Ledgerline record a run?"
PAGES = [
    "Ledgerline keeps a journal of every run for Tessaly.",
    "Ledgerline writes each run to a journal on disk.",
    "Ledgerline can replay a run from its journal.",
    "The --record option of the kiln timer prints the temperature.",
    "The bakery opens before dawn on weekdays.",
    "Gulls nest on the breakwater in spring.",
]
_CHIP = re.compile(r'data-entity-chip="\d+">([^<]*) <span')


@pytest.fixture
def ada(make_member, llm):  # noqa: F811
    llm.responder = World(
        entities={"Ledgerline": "product", "Tessaly": "person", "--record": "concept"},
        relations=[("Ledgerline", "Tessaly", "related_to")],
    )
    member = make_member("ada", workspace="lab", role=Role.VIEWER)
    for n, text in enumerate(PAGES):
        source, _ = do_create_text_source(
            workspace=member.workspace,
            title=f"page {n}",
            text=text,
            options=validate_source_options(),
        )
        run_pending(source)
    return member


def test_chips_keep_what_the_question_names_and_the_top_passages_mention_not_a_loose_match(
    ada,
):
    html = signed_in(ada).get("/ask/", {"q": QUESTION}).content.decode()
    chips = _CHIP.findall(html)
    assert "Ledgerline" in chips  # named whole
    assert "Tessaly" in chips  # not named, but the first passage is about it
    assert "--record" not in chips  # "record" only matches it loosely

    answer = ada.client().post(
        f"/api/v1/workspaces/{ada.workspace.slug}/ask",
        {"question": QUESTION},
        content_type="application/json",
    )
    assert answer.status_code == 200
    names = {e["name"] for e in answer.json()["entities"]}
    assert {"Ledgerline", "Tessaly"} <= names and "--record" not in names


def test_an_entity_the_question_names_whole_is_a_chip(ada):
    html = signed_in(ada).get("/ask/", {"q": "What does --record print for Ledgerline?"})
    chips = _CHIP.findall(html.content.decode())
    assert "--record" in chips
