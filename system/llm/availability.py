"""Whether an LLM is there to call: the one answer every caller asks for.

Two questions, because the offline switch is about the ingest pipeline only:
`llm_available()` for work that needs nothing but an LLM (answers, community summaries),
and `extraction_uses_llm()` for the pipeline's LLM work (extraction, the review of doubtful
pairs and long descriptions, and what reports on them: the health report, the sources
page), which EXTRACTION_OFFLINE turns off while an LLM stays configured for answers.

A setting that is only whitespace counts as unset, as it does for `LlmClient.from_settings`:
a predicate saying yes to a client that then refuses to be built would fail every call.
"""

from __future__ import annotations

from django.conf import settings


def configured_base_url() -> str:
    """LLM_BASE_URL without surrounding whitespace ("" when unset)."""
    return str(settings.LLM_BASE_URL or "").strip()


def configured_model() -> str:
    """LLM_MODEL without surrounding whitespace ("" when unset)."""
    return str(settings.LLM_MODEL or "").strip()


def llm_available() -> bool:
    """LLM_BASE_URL and LLM_MODEL are both set: answers and summaries can be written."""
    return bool(configured_base_url() and configured_model())


def extraction_uses_llm() -> bool:
    """An LLM is available and EXTRACTION_OFFLINE is off: extraction uses the LLM (else the
    offline extractor) and the pipeline's review puts doubtful pairs to it."""
    return llm_available() and not settings.EXTRACTION_OFFLINE
