"""Ask benchmark (issue 16): what `ask` adds around the LLM, and the first streamed token.

    .venv/bin/python bench/ask.py [--chunks 100000] [--entities 50000] [--questions 200]
                                  [--llm-delay 0.2] [--piece-delay 0.02] [--keep] [--reuse]

The workspace is the retrieval benchmark's synthetic one (bench/retrieval_run.py: Zipf
words from a real vocabulary, random unit vectors of the model's dimension, power-law
entities, mentions and relations), `--chunks` chunks of it. Then, per question:

- ask latency without the LLM: `prepare_ask` (the hybrid search, as the API runs it), the
  prompt built from its passages, and the citation check of a reply citing them, timed
  together; the question's embedding is computed beforehand (as in the retrieval
  benchmark), the LLM's own time is not in it. p50 / p95.
- time to first streamed token: the scripted OpenAI-compatible server
  (tests/llm_server.py, in its own process) answers after `--llm-delay` seconds, a word
  every `--piece-delay` seconds; measured from the start of the ask to the first `delta`
  event of `AskPlan.events()`, the same events the API streams. p50 / p95, and the same
  less the server's delay.

Uses its own database (`graphloom_bench`) on the embedded server.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


def respond(body: dict[str, Any]) -> Any:
    """The scripted model's reply: a few sentences citing the first two passages, a word
    every BENCH_PIECE_DELAY seconds (run in the server's process: nothing of Django is
    imported here)."""
    import os

    from tests.llm_server import Reply

    return Reply(
        content=(
            "Crates left the northern dock on Tuesday morning [1]. "
            "Two inspectors signed the manifest before noon [1, 2]. "
            "Nobody reported damage afterwards [2]."
        ),
        piece_delay=float(os.environ.get("BENCH_PIECE_DELAY", "0") or 0),
    )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run("bench.ask_run", drop_env_prefixes=("LLM_", "ASK_"))
