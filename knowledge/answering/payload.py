"""The JSON of an answer and the server-sent events that stream it: one rendering for the
API, the stream's `done` event and `manage.py ask --json`, so they cannot drift apart.
`answer_html` is the answer's Markdown rendered and allow-listed here (markdown.py), so a
browser never renders the LLM's text itself."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from knowledge.answering.markdown import render_answer
from knowledge.answering.types import Answer, Citation, Passage


def passage_payload(passage: Passage) -> dict[str, Any]:
    return asdict(passage)


def citation_payload(citation: Citation) -> dict[str, Any]:
    return asdict(citation)


def _answer_html(answer: Answer) -> str | None:
    if answer.answer is None:
        return None
    return render_answer(answer.answer, {c.n for c in answer.citations})


def answer_payload(answer: Answer) -> dict[str, Any]:
    return {
        "question": answer.question,
        "mode": answer.mode,
        "llm_configured": answer.llm_configured,
        "answered": answer.answered,
        "answer": answer.answer,
        "answer_html": _answer_html(answer),
        "citations": [citation_payload(c) for c in answer.citations],
        "passages": [passage_payload(p) for p in answer.passages],
        "entities": list(answer.entities),
        "relations": list(answer.relations),
        "usage": asdict(answer.usage) if answer.usage is not None else None,
        "warnings": list(answer.warnings),
    }


def sse_event(name: str, data: dict[str, Any]) -> str:
    """One server-sent event. JSON has no raw newlines, so `data` stays one line."""
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
