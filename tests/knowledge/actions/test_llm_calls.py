"""`do_record_llm_call`, the one writer of `LlmCall` rows."""

from __future__ import annotations

from decimal import Decimal

from ingest.actions.sources import do_create_text_source, validate_source_options
from knowledge.actions.llm_calls import do_record_llm_call
from knowledge.models import LlmCall


def test_one_row_with_the_given_fields_priced_at_the_configured_prices(alice, settings):
    settings.LLM_PRICE_INPUT_PER_MTOK = 2.0
    settings.LLM_PRICE_OUTPUT_PER_MTOK = 8.0
    source, _ = do_create_text_source(
        workspace=alice.workspace, title="notes", text="Ada.", options=validate_source_options()
    )
    call = do_record_llm_call(
        workspace_id=alice.workspace.pk,
        purpose="glean",
        model="scripted-model",
        prompt_tokens=1000,
        completion_tokens=500,
        usage_estimated=True,
        duration_ms=1234,
        attempts=3,
        source=source,
    )
    [row] = LlmCall.objects.all()
    assert row.pk == call.pk
    assert (row.workspace_id, row.source_id, row.run_id) == (alice.workspace.pk, source.pk, None)
    assert (row.purpose, row.model) == ("glean", "scripted-model")
    assert (row.prompt_tokens, row.completion_tokens, row.usage_estimated) == (1000, 500, True)
    assert (row.duration_ms, row.attempts, row.ok, row.error) == (1234, 3, True, "")
    assert row.cost == Decimal("0.006") == call.cost


def test_a_failed_call_keeps_its_error_bounded_and_costs_nothing(alice):
    do_record_llm_call(
        workspace_id=alice.workspace.pk,
        purpose="answer",
        model="m",
        ok=False,
        error="x" * 5000,
    )
    row = LlmCall.objects.get()
    assert (row.ok, row.attempts, row.prompt_tokens, row.cost) == (False, 1, 0, Decimal(0))
    assert row.error == "x" * 2000
    assert row.source_id is None
