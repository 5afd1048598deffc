"""LLM use across every workspace, for the Prometheus endpoint (METRICS_COLLECTORS,
system/metrics.py): calls, tokens and cost by purpose (extract, glean, review, summary,
answers…), counted from LlmCall rows at scrape time, so every web process reports the same
totals. No workspace label: their number has no bound."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count, Sum
from prometheus_client.core import CounterMetricFamily, Metric

from knowledge.models import LlmCall


def llm_usage_metrics() -> Iterator[Metric]:
    calls = CounterMetricFamily(
        "graphloom_llm_calls", "LLM requests, by purpose and outcome.", labels=["purpose", "ok"]
    )
    tokens = CounterMetricFamily(
        "graphloom_llm_tokens",
        "Tokens sent (prompt) and received (completion), by purpose.",
        labels=["purpose", "kind"],
    )
    cost = CounterMetricFamily(
        "graphloom_llm_cost_usd",
        "What the LLM requests cost at LLM_PRICE_*, in US dollars, by purpose.",
        labels=["purpose"],
    )
    rows = (
        LlmCall.objects.values("purpose", "ok")
        .annotate(
            n=Count("id"),
            prompt=Sum("prompt_tokens"),
            completion=Sum("completion_tokens"),
            spent=Sum("cost"),
        )
        .order_by("purpose", "ok")
    )
    by_purpose: dict[str, list[float]] = {}
    for row in rows:
        calls.add_metric([row["purpose"], "true" if row["ok"] else "false"], row["n"])
        totals = by_purpose.setdefault(row["purpose"], [0.0, 0.0, 0.0])
        totals[0] += row["prompt"] or 0
        totals[1] += row["completion"] or 0
        totals[2] += float(row["spent"] or 0)
    for purpose, (prompt, completion, spent) in by_purpose.items():
        tokens.add_metric([purpose, "prompt"], prompt)
        tokens.add_metric([purpose, "completion"], completion)
        cost.add_metric([purpose], spent)
    yield calls
    yield tokens
    yield cost
