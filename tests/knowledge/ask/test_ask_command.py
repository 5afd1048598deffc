"""`manage.py ask`: the JSON the API gives, readable text, and its exit codes (2 usage,
3 budget spent, 1 LLM failure; 0 with passages and a warning without an LLM)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from knowledge.actions.ask import NEEDS_LLM
from tests.knowledge.ask.conftest import CRANE, citing
from tests.llm_server import Reply

QUESTION = "Who repaired crane 7?"
CLAIM = "Mirela Ostrova repaired crane 7"


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("ask", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def exit_code(*args: str) -> int:
    with pytest.raises(CommandError) as caught:
        run(*args)
    return caught.value.returncode


def test_json_output_is_the_api_answer(alice, llm, corpus):
    llm.responder = citing("Mirela Ostrova", CLAIM)
    out, _ = run(QUESTION, "--workspace", "acme", "--json")
    data = json.loads(out)
    assert data["answered"]
    n = data["citations"][0]["n"]
    assert data["answer"] == f"{CLAIM} [{n}]."
    api = alice.client().post(
        "/api/v1/workspaces/acme/ask",
        data=json.dumps({"question": QUESTION}),
        content_type="application/json",
    )
    assert api.json() == data


def test_text_output_shows_the_answer_and_its_citations(alice, llm, corpus):
    llm.responder = citing("Mirela Ostrova", CLAIM)
    out, _ = run(QUESTION, "--workspace", "acme")
    lines = out.splitlines()
    assert lines[0].startswith(CLAIM + " [")
    assert any(line.startswith("[") and "chars" in line for line in lines[1:])
    assert "tokens:" in out


def test_without_an_llm_it_prints_the_passages_and_says_answers_need_one(alice, ingest_text):
    ingest_text(CRANE, title="Harbour log")
    out, err = run(QUESTION, "--workspace", "acme")
    assert f"warning: {NEEDS_LLM}" in err
    assert "Mirela Ostrova" in out
    data = json.loads(run(QUESTION, "--workspace", "acme", "--json")[0])
    assert data["answer"] is None and NEEDS_LLM in data["warnings"]


def test_exit_codes(alice, llm, corpus, settings):
    assert exit_code(QUESTION, "--workspace", "nowhere") == 2
    assert exit_code("   ", "--workspace", "acme") == 2
    llm.script(Reply(status=400, content="no"))
    assert exit_code(QUESTION, "--workspace", "acme") == 1
    settings.LLM_PRICE_INPUT_PER_MTOK = 1_000_000.0
    settings.ASK_MONTHLY_BUDGET_USD = 1.0
    llm.responder = citing("Mirela Ostrova", CLAIM)
    run(QUESTION, "--workspace", "acme")  # spends it
    assert exit_code(QUESTION, "--workspace", "acme") == 3
