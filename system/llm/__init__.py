"""The LLM, in one room: everything about talking to an OpenAI-compatible chat model that
does not depend on what is asked of it.

    client.py        the chat client: request building, retries with backoff, streaming,
                     JSON checks, bounded bodies, actionable errors (`LlmClient.from_settings`
                     reads the LLM_* settings of config/settings/base.py)
    availability.py  whether an LLM is there: `llm_available()` (answers, summaries) and
                     `extraction_uses_llm()` (the pipeline: also EXTRACTION_OFFLINE off)
    pricing.py       what a call costs at LLM_PRICE_*_PER_MTOK
    quoted_text.py   the one cleaner of text quoted from documents or LLM replies

What is asked lives with the asker: the prompt files and their loader in knowledge/prompts/,
the log of calls (`LlmCall`, written by knowledge/actions/llm_calls.py) in knowledge.
`system` knows no app above it, so nothing here imports one.
"""
