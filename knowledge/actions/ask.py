"""Asking a workspace a question: passages retrieved by the hybrid search, an answer from
the LLM that cites them, the citations checked against them, the usage recorded and the
monthly answer budget kept.

One implementation for every caller: `prepare_ask` retrieves and checks the budget (so a
spent budget is an error before anything is streamed), `AskPlan.events()` yields the
stream's events (passages, deltas, citations, done or error), and `do_ask` is those events
consumed, its answer the `done` event's. The LLM's reply is always requested as a stream.

Global mode maps the question over the LLM's community summaries (written, or rewritten
when their members changed: after each community recomputation, see
`do_write_community_summaries`, and on first need) and reduces the partial answers together with
the passages retrieved for the question; citations in global mode point at those
passages, since summaries are not evidence.

The LLM is called outside any transaction; each call's usage is written in its own.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from django.conf import settings

from ingest.selectors import chunks_opening_in_code
from knowledge.actions.communities import SummaryRefresh, do_refresh_community_summaries
from knowledge.actions.llm_calls import do_record_llm_call
from knowledge.answering.citations import AnswerStream
from knowledge.answering.payload import answer_payload, passage_payload
from knowledge.answering.prompt import (
    NOT_IN_DOCUMENTS,
    NOTHING_RELEVANT,
    QUESTION_CHARS,
    answer_messages,
    map_messages,
)
from knowledge.answering.readable import passage_blocks
from knowledge.answering.types import Answer, Passage, PassageBlock, Usage
from knowledge.models import CommunitySummary
from knowledge.retrieval import hybrid_search
from knowledge.retrieval.limits import MAX_QUERY_CHARS
from knowledge.retrieval.subjects import question_subjects
from knowledge.retrieval.types import QueryVector
from knowledge.selectors.llm_usage import month_start, spent_this_month
from system.llm.availability import llm_available
from system.llm.client import ChatReply, LlmClient, LlmError
from workspaces.errors import InvalidInput
from workspaces.models import Workspace

MODES = ("local", "global")
ANSWER_PURPOSES = ("answer", "answer_map", "summary")
NEEDS_LLM = "Answers need an LLM (set LLM_BASE_URL and LLM_MODEL)."
NO_PASSAGES = "No passage matched the question and its filters; the LLM was not asked."
NO_SUMMARIES = "Global answers read community summaries, which an LLM writes; there are none yet."

Event = tuple[str, dict[str, Any]]


class AnswerBudgetSpent(Exception):
    """The workspace's monthly answer budget is spent (HTTP 402, command exit 3)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class AskFailed(Exception):
    """The LLM gave no answer (HTTP 502, command exit 1); the message says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# --- budget ------------------------------------------------------------------------------


def monthly_budget(workspace: Workspace) -> Decimal:
    """ASK_WORKSPACE_BUDGETS_USD's amount for the workspace, else ASK_MONTHLY_BUDGET_USD."""
    for item in str(settings.ASK_WORKSPACE_BUDGETS_USD or "").split(","):
        slug, _, amount = item.partition("=")
        if slug.strip() == workspace.slug and amount.strip():
            return Decimal(amount.strip())
    return Decimal(str(settings.ASK_MONTHLY_BUDGET_USD))


def check_budget(workspace: Workspace) -> None:
    budget = monthly_budget(workspace)
    if budget <= 0:
        return
    spent = spent_this_month(workspace, purposes=ANSWER_PURPOSES)
    if spent >= budget:
        raise AnswerBudgetSpent(
            f"The workspace's monthly answer budget ({budget:.2f}) is spent; "
            f"{spent:.4f} used since {month_start():%Y-%m-%d}. Answers resume next month, or "
            "raise ASK_MONTHLY_BUDGET_USD (or this workspace's ASK_WORKSPACE_BUDGETS_USD)."
        )


def _record(workspace: Workspace, purpose: str, reply: ChatReply) -> Usage:
    call = do_record_llm_call(
        workspace_id=workspace.pk,
        purpose=purpose,
        model=reply.model,
        prompt_tokens=reply.usage.prompt_tokens,
        completion_tokens=reply.usage.completion_tokens,
        usage_estimated=reply.usage.estimated,
        duration_ms=reply.duration_ms,
        attempts=reply.attempts,
    )
    return Usage(reply.usage.prompt_tokens, reply.usage.completion_tokens, float(call.cost))


def _record_failure(workspace: Workspace, purpose: str, model: str, error: LlmError) -> None:
    # An answer's failure keeps the first 1000 characters of its message (the row takes
    # up to ERROR_CHARS): as it always has.
    do_record_llm_call(
        workspace_id=workspace.pk,
        purpose=purpose,
        model=model,
        attempts=max(1, error.attempts),
        ok=False,
        error=str(error)[:1000],
    )


def _add(total: Usage | None, more: Usage) -> Usage:
    if total is None:
        return more
    return Usage(
        total.prompt_tokens + more.prompt_tokens,
        total.completion_tokens + more.completion_tokens,
        (total.cost or 0.0) + (more.cost or 0.0),
    )


def do_write_community_summaries(*, workspace: Workspace) -> SummaryRefresh | None:
    """Bring the summaries of the ASK_GLOBAL_COMMUNITIES largest communities up to date
    (those whose members changed since), so a global question does not wait for them.
    None, writing nothing, without an LLM or when the month's answer budget is spent.
    Raises LlmError when the LLM fails (the failure is recorded)."""
    if not llm_available():
        return None
    try:
        check_budget(workspace)
    except AnswerBudgetSpent:
        return None
    client = LlmClient.from_settings()
    try:
        return _refresh_summaries(workspace, client)
    finally:
        client.close()


def _refresh_summaries(workspace: Workspace, client: LlmClient) -> SummaryRefresh:
    """The ASK_GLOBAL_COMMUNITIES largest communities' summaries brought up to date; an
    LLM failure is recorded, then raised."""
    try:
        return do_refresh_community_summaries(
            workspace=workspace, client=client, limit=settings.ASK_GLOBAL_COMMUNITIES
        )
    except LlmError as error:
        _record_failure(workspace, "summary", client.model, error)
        raise


# --- the plan and its events -------------------------------------------------------------


@dataclass(slots=True)
class AskPlan:
    workspace: Workspace
    answer: Answer
    client: LlmClient | None = None
    notes: list[str] = field(default_factory=list)

    def events(self) -> Iterator[Event]:
        """passages, then (with an LLM) delta and citation events, then done — or error
        instead of done when the LLM fails."""
        answer = self.answer
        yield (
            "passages",
            {
                "passages": [passage_payload(p) for p in answer.passages],
                "entities": answer.entities,
                "relations": answer.relations,
            },
        )
        if self.client is None:
            yield "done", answer_payload(answer)
            return
        try:
            if answer.mode == "global":
                self._map()
            yield from self._reduce()
        except LlmError as error:
            yield "error", {"detail": str(error)}
            return
        finally:
            self.client.close()
        yield "done", answer_payload(answer)

    def _map(self) -> None:
        """Each community summary → the part of it relevant to the question (or nothing)."""
        assert self.client is not None
        _refresh_summaries(self.workspace, self.client)
        summaries = list(
            CommunitySummary.objects.for_workspace(self.workspace)[
                : settings.ASK_GLOBAL_COMMUNITIES
            ]
        )
        if not summaries:
            self.answer.warnings.append(NO_SUMMARIES)
        for summary in summaries:
            messages = map_messages(self.answer.question, summary.title, summary.summary)
            try:
                reply = self.client.chat(messages, max_tokens=400)
            except LlmError as error:
                _record_failure(self.workspace, "answer_map", self.client.model, error)
                raise
            self.answer.usage = _add(
                self.answer.usage, _record(self.workspace, "answer_map", reply)
            )
            text = reply.content.strip()
            if text and NOTHING_RELEVANT.lower() not in text.lower():
                self.notes.append(f"{summary.title}: {text}")

    def _reduce(self) -> Iterator[Event]:
        """The answer streamed from the LLM through the citation check."""
        assert self.client is not None
        answer = self.answer
        if not answer.passages and not self.notes:
            # Nothing to answer from (the filters left no passage): no call to pay for.
            answer.answered, answer.answer = False, NOT_IN_DOCUMENTS
            answer.warnings.append(NO_PASSAGES)
            yield "delta", {"text": NOT_IN_DOCUMENTS}
            return
        stream = AnswerStream(answer.passages)
        pieces: queue.Queue[tuple[str, object]] = queue.Queue()
        messages = answer_messages(answer.question, answer.passages, self.notes)
        client = self.client

        def call() -> None:
            try:
                reply = client.chat_stream(
                    messages,
                    max_tokens=settings.ASK_MAX_TOKENS,
                    on_text=lambda text: pieces.put(("text", text)),
                )
                pieces.put(("reply", reply))
            except LlmError as error:
                pieces.put(("error", error))
            except Exception as error:
                pieces.put(("error", LlmError(f"LLM request failed: {error}")))

        worker = threading.Thread(target=call, name="ask-llm", daemon=True)
        worker.start()
        while True:
            kind, value = pieces.get()
            if kind == "text":
                yield from stream.feed(str(value))
                continue
            worker.join()
            if kind == "error":
                assert isinstance(value, LlmError)
                _record_failure(self.workspace, "answer", client.model, value)
                raise value
            assert isinstance(value, ChatReply)
            yield from stream.finish()
            answer.usage = _add(answer.usage, _record(self.workspace, "answer", value))
            outcome = stream.outcome()
            answer.answered = outcome.answered
            answer.answer = outcome.answer
            answer.citations = outcome.citations
            answer.warnings.extend(outcome.warnings)
            return


def _checked(question: str, mode: str) -> str:
    text = " ".join(str(question or "").split())
    if not text:
        raise InvalidInput("The question is empty.")
    if len(text) > QUESTION_CHARS:
        raise InvalidInput(f"The question is longer than {QUESTION_CHARS} characters.")
    if mode not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}, not {mode!r}.")
    return text


def _passages(workspace: Workspace, chunks: Sequence[Any]) -> list[Passage]:
    in_code = chunks_opening_in_code(workspace, [c.id for c in chunks])
    return [
        Passage(
            n=n,
            chunk_id=c.id,
            document_id=c.document_id,
            document_title=c.document_title,
            source_id=c.source_id,
            url=c.url,
            path=c.document_path,
            char_start=c.char_start,
            char_end=c.char_end,
            text=c.text,
            score=round(float(c.score), 6),
            blocks=tuple(
                PassageBlock(code=code, text=body)
                for code, body in passage_blocks(c.text, in_code=c.id in in_code)
            ),
            published_at=c.published_at.isoformat() if c.published_at else None,
        )
        for n, c in enumerate(chunks, start=1)
    ]


def prepare_ask(
    *,
    workspace: Workspace,
    question: str,
    mode: str = "local",
    sources: Sequence[int] | None = None,
    entity_types: Sequence[str] | None = None,
    limit: int = 8,
    hops: int | None = None,
    query_vector: QueryVector | None = None,
    ingested_from: date | None = None,
    ingested_to: date | None = None,
    published_from: date | None = None,
    published_to: date | None = None,
    recency: float | None = None,
) -> AskPlan:
    """Retrieve the passages and check the budget. Raises InvalidInput for a bad question
    or option, AnswerBudgetSpent when an LLM is configured and the month's budget is
    spent. `query_vector` replaces embedding the question (the benchmark)."""
    text = _checked(question, mode)
    result = hybrid_search(
        workspace=workspace,
        query=text[:MAX_QUERY_CHARS],
        limit=limit,
        hops=hops,
        entity_types=entity_types,
        sources=sources,
        query_vector=query_vector,
        ingested_from=ingested_from,
        ingested_to=ingested_to,
        published_from=published_from,
        published_to=published_to,
        recency=recency,
    )
    answer = Answer(
        question=text,
        mode=mode,
        llm_configured=llm_available(),
        passages=_passages(workspace, result.chunks),
        entities=[{"id": e.id, "name": e.name, "type": e.type} for e in question_subjects(result)],
        relations=[
            {"id": r.id, "source_id": r.source_id, "target_id": r.target_id, "type": r.type}
            for r in result.relations
        ],
        warnings=list(result.warnings),
    )
    if not answer.llm_configured:
        answer.warnings.append(NEEDS_LLM)
        if mode == "global":
            answer.warnings.append(NO_SUMMARIES)
        return AskPlan(workspace=workspace, answer=answer)
    check_budget(workspace)
    return AskPlan(workspace=workspace, answer=answer, client=LlmClient.from_settings())


def do_ask(
    *,
    workspace: Workspace,
    question: str,
    mode: str = "local",
    sources: Sequence[int] | None = None,
    entity_types: Sequence[str] | None = None,
    limit: int = 8,
    hops: int | None = None,
    ingested_from: date | None = None,
    ingested_to: date | None = None,
    published_from: date | None = None,
    published_to: date | None = None,
    recency: float | None = None,
) -> Answer:
    """The whole answer (the stream consumed). Raises InvalidInput, AnswerBudgetSpent, or
    AskFailed when the LLM gives no answer."""
    plan = prepare_ask(
        workspace=workspace,
        question=question,
        mode=mode,
        sources=sources,
        entity_types=entity_types,
        limit=limit,
        hops=hops,
        ingested_from=ingested_from,
        ingested_to=ingested_to,
        published_from=published_from,
        published_to=published_to,
        recency=recency,
    )
    for name, data in plan.events():
        if name == "error":
            raise AskFailed(str(data["detail"]))
    return plan.answer
