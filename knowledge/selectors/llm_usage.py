"""LLM use, summed from the `LlmCall` rows (knowledge/actions/llm_calls.py writes them).

`spent_this_month` is the one answer to "what has this workspace spent on the LLM since the
month began" (all purposes, or some): the answer budget (knowledge/actions/ask.py), the
review budget (the `llm_review` job) and the workspace's monthly budget that extraction
pauses at (knowledge/actions/extraction/monthly_budget.py) all ask it.

`llm_usage_metrics` is LLM use across every workspace, for the Prometheus endpoint
(METRICS_COLLECTORS, system/metrics.py): calls, tokens and cost by purpose (extract, glean,
review, summary, answers…), counted at scrape time, so every web process reports the same
totals. No workspace label: their number has no bound."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import Count, Sum
from django.utils import timezone
from prometheus_client.core import CounterMetricFamily, Metric

from ingest.models import Source
from knowledge.models import ExtractionStatus, LlmCall
from system.llm.availability import llm_available
from workspaces.models import Workspace
from workspaces.selectors import llm_monthly_budget


def month_start() -> datetime:
    """The first instant of the current calendar month (UTC): budgets are monthly."""
    return timezone.now().replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def spent_this_month(workspace: Workspace, *, purposes: Iterable[str] | None = None) -> Decimal:
    """What the workspace's LLM calls (of these purposes; None: all) cost since the month
    began, at the prices they were recorded with."""
    calls = LlmCall.objects.for_workspace(workspace).filter(created_at__gte=month_start())
    if purposes is not None:
        calls = calls.filter(purpose__in=list(purposes))
    total = calls.aggregate(total=Sum("cost"))["total"]
    return total or Decimal(0)


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


def get_llm_budget(workspace: Workspace) -> dict[str, Any]:
    """The workspace's monthly LLM budget as the workspace page and the API show it: the
    amount in force (None: no limit) and where it comes from, what the month has spent,
    and the sources whose extraction waits for it."""
    limit = llm_monthly_budget(workspace)
    spent = spent_this_month(workspace)
    override = workspace.llm_monthly_budget_usd
    paused = (
        Source.objects.for_workspace(workspace)
        .filter(extraction__status=ExtractionStatus.PAUSED)
        .order_by("pk")
        .values("id", "name")
    )
    return {
        "llm_configured": llm_available(),
        "monthly_budget_usd": float(limit) if limit is not None else None,
        "default_usd": settings.LLM_WORKSPACE_MONTHLY_BUDGET_USD,
        "override_usd": float(override) if override is not None else None,
        "spent_this_month_usd": float(spent),
        "month_start": month_start().date(),
        "remaining_usd": float(max(limit - spent, Decimal(0))) if limit is not None else None,
        "spent_out": limit is not None and spent >= limit,
        "paused_sources": list(paused),
    }
