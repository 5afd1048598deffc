"""The log of LLM requests: one `LlmCall` row per request, whoever made it (extraction,
review, answers, community summaries), failed ones included.

One writer, so every row is priced by the same rule (system/llm/pricing.py) and carries the
same fields; the monthly answer budget, the review budget, the extraction account and
/metrics all sum these rows.
"""

from __future__ import annotations

from ingest.models import Source
from knowledge.models import ExtractionRun, LlmCall
from system.llm.pricing import llm_cost

# The most of an error message a row keeps.
ERROR_CHARS = 2000


def do_record_llm_call(
    *,
    workspace_id: int,
    purpose: str,
    model: str,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
    usage_estimated: bool = False,
    duration_ms: int = 0,
    attempts: int = 1,
    ok: bool = True,
    error: str = "",
    source: Source | None = None,
    run: ExtractionRun | None = None,
) -> LlmCall:
    """Write one request's row, its cost at the configured prices; returns the row (whose
    `cost` the caller may add to an account). A single insert: it joins the caller's
    transaction when there is one."""
    return LlmCall.objects.create(
        workspace_id=workspace_id,
        source=source,
        run=run,
        purpose=purpose,
        model=model,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        usage_estimated=usage_estimated,
        cost=llm_cost(prompt_tokens, completion_tokens),
        duration_ms=duration_ms,
        attempts=attempts,
        ok=ok,
        error=error[:ERROR_CHARS],
    )
