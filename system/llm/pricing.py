"""What LLM calls cost at the configured prices: one rule for extraction, review, answers,
community summaries and estimates."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings


def llm_cost(prompt_tokens: int, completion_tokens: int) -> Decimal:
    """The cost of a call at LLM_PRICE_INPUT_PER_MTOK / LLM_PRICE_OUTPUT_PER_MTOK."""
    return (
        Decimal(prompt_tokens) * Decimal(str(settings.LLM_PRICE_INPUT_PER_MTOK))
        + Decimal(completion_tokens) * Decimal(str(settings.LLM_PRICE_OUTPUT_PER_MTOK))
    ) / Decimal(1_000_000)
