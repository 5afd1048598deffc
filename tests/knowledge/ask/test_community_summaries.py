"""Community summaries are written when communities are recomputed (the `communities`
command and the `compute_communities` task), not only on the first global question:
changed communities only, within the answer budget, never without an LLM."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from knowledge.answering.prompt import SUMMARY_SYSTEM_PROMPT
from knowledge.models import CommunitySummary, Entity, LlmCall
from knowledge.tasks import compute_communities
from tests.knowledge.ask.conftest import system_of
from tests.llm_server import Reply

SUMMARY = "Harbour maintenance\nThe repair crew keeps the cranes working."


def summarising(body: dict[str, Any]) -> Reply:
    if system_of(body) == SUMMARY_SYSTEM_PROMPT:
        return Reply(content=SUMMARY, usage=(120, 30))
    return Reply(content="unexpected request", status=500)


def communities(*args: str) -> dict[str, Any]:
    out = StringIO()
    call_command("communities", "--workspace", "acme", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def summary_requests(llm) -> int:
    return sum(system_of(r.body) == SUMMARY_SYSTEM_PROMPT for r in llm.chat_requests)


def test_recomputing_communities_writes_their_summaries_once_then_only_when_members_change(
    alice, llm, corpus
):
    llm.responder = summarising
    report = communities()
    written = report["summaries"]["written"]
    stored = list(CommunitySummary.objects.for_workspace(alice.workspace))
    assert written == len(stored) > 0
    assert summary_requests(llm) == written
    assert all(s.title == "Harbour maintenance" for s in stored)
    assert LlmCall.objects.filter(workspace=alice.workspace, purpose="summary").count() == written

    llm.clear_requests()
    again = communities()
    assert again["summaries"]["written"] == 0
    assert again["summaries"]["kept"] == written
    assert summary_requests(llm) == 0

    CommunitySummary.objects.filter(pk=stored[0].pk).update(member_hash="stale")
    assert communities()["summaries"]["written"] == 1


def test_no_summaries_without_an_llm_or_with_no_summaries(alice, llm, corpus, settings):
    llm.responder = summarising
    assert communities("--no-summaries")["summaries"] is None
    settings.LLM_BASE_URL = ""
    assert communities()["summaries"] is None
    assert summary_requests(llm) == 0
    assert not CommunitySummary.objects.for_workspace(alice.workspace).exists()
    assert Entity.objects.for_workspace(alice.workspace).exclude(community=None).exists()


def test_a_spent_answer_budget_writes_no_summaries(alice, llm, corpus, settings):
    llm.responder = summarising
    settings.ASK_MONTHLY_BUDGET_USD = 0.1
    settings.LLM_PRICE_INPUT_PER_MTOK = 1000.0  # 120 prompt tokens cost 0.12
    assert communities()["summaries"]["written"] > 0  # these spend the month's budget
    llm.clear_requests()
    CommunitySummary.objects.for_workspace(alice.workspace).update(member_hash="stale")
    assert communities()["summaries"] is None
    assert summary_requests(llm) == 0


def test_a_failing_llm_exits_1_with_the_communities_stored(alice, llm, corpus, settings):
    settings.LLM_MAX_RETRIES = 0
    llm.responder = lambda body: Reply(content="down", status=500)
    with pytest.raises(CommandError) as caught:
        communities()
    assert caught.value.returncode == 1
    assert "failed writing their summaries" in str(caught.value)
    assert Entity.objects.for_workspace(alice.workspace).exclude(community=None).exists()
    assert LlmCall.objects.filter(workspace=alice.workspace, purpose="summary", ok=False).exists()


def test_the_background_task_recomputes_and_summarises(alice, llm, corpus):
    llm.responder = summarising
    outcome = compute_communities.call(alice.workspace.pk)
    written = CommunitySummary.objects.for_workspace(alice.workspace).count()
    assert written > 0
    assert f"{written} summaries written" in outcome
