"""`POST /workspaces/{slug}/ask`: an answer citing the workspace's passages
(knowledge/actions/ask.py), as JSON, or as server-sent events when the request accepts
`text/event-stream`. Both read the one event sequence of `AskPlan.events()`: the JSON is
its `done` event."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.http import HttpRequest, StreamingHttpResponse
from ninja import Router, Status

from knowledge.actions.ask import AnswerBudgetSpent, AskPlan, prepare_ask
from knowledge.answering.payload import sse_event
from knowledge.schemas.ask import AskErrorOut, AskIn, AskOut
from workspaces.auth import get_workspace_access

router = Router(tags=["knowledge"])


def _stream(plan: AskPlan) -> Iterator[str]:
    for name, data in plan.events():
        yield sse_event(name, data)


@router.post(
    "/workspaces/{slug}/ask",
    response={200: AskOut, 402: AskErrorOut, 502: AskErrorOut},
    summary="Answer a question from the workspace's documents, with citations",
)
def ask(request: HttpRequest, slug: str, payload: AskIn) -> Any:
    """Retrieves passages (hybrid search) and, with an LLM configured, answers from them
    only, every claim citing passages [n] whose evidence spans are listed in `citations`
    (invented citations are dropped with a warning). Says plainly when the passages do not
    answer. `mode=global` also reads the LLM's community summaries. Without an LLM: the
    passages and a warning. `Accept: text/event-stream` streams events passages, delta,
    citation, then done (this JSON) or error. 402 when the workspace's monthly answer
    budget is spent; 502 when the LLM fails. Any member may ask."""
    workspace = get_workspace_access(request, slug).workspace
    try:
        plan = prepare_ask(
            workspace=workspace,
            question=payload.question,
            mode=payload.mode,
            sources=payload.sources,
            entity_types=payload.entity_types,
            limit=payload.limit,
            hops=payload.hops,
            ingested_from=payload.ingested_from,
            ingested_to=payload.ingested_to,
            published_from=payload.published_from,
            published_to=payload.published_to,
            recency=payload.recency,
        )
    except AnswerBudgetSpent as exc:
        return Status(402, {"detail": exc.message})
    if "text/event-stream" in request.headers.get("Accept", ""):
        response = StreamingHttpResponse(_stream(plan), content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # proxies must pass events on at once
        return response
    for name, data in plan.events():
        if name == "error":
            return Status(502, {"detail": data["detail"]})
        if name == "done":
            return Status(200, data)
    return Status(502, {"detail": "The answer ended without a result."})
