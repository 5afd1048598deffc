"""The two questions "is there an LLM?": answers and summaries need LLM_BASE_URL and
LLM_MODEL; extraction (and the pipeline's review) also needs EXTRACTION_OFFLINE off."""

from __future__ import annotations

import pytest

from system.llm.availability import extraction_uses_llm, llm_available

URL = "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("base_url", "model", "offline", "available", "extraction"),
    [
        ("", "", False, False, False),
        (URL, "", False, False, False),
        ("", "m", False, False, False),
        (URL, "m", False, True, True),
        ("", "", True, False, False),
        (URL, "", True, False, False),
        ("", "m", True, False, False),
        (URL, "m", True, True, False),
    ],
)
def test_each_combination_of_url_model_and_offline_switch(
    settings, base_url, model, offline, available, extraction
):
    settings.LLM_BASE_URL, settings.LLM_MODEL = base_url, model
    settings.EXTRACTION_OFFLINE = offline
    assert llm_available() is available
    assert extraction_uses_llm() is extraction


def test_a_setting_of_only_whitespace_counts_as_unset(settings):
    settings.EXTRACTION_OFFLINE = False
    settings.LLM_BASE_URL, settings.LLM_MODEL = "  ", "m"
    assert not llm_available() and not extraction_uses_llm()
    settings.LLM_BASE_URL, settings.LLM_MODEL = URL, " \t"
    assert not llm_available() and not extraction_uses_llm()
