"""Extraction benchmark (issue 5).

    .venv/bin/python bench/extract.py [--windows 160] [--runs 3] [--latency 0.2]
                                      [--concurrency 1 4 8] [--offline-windows 40]

1. LLM extraction against the local scripted chat-completions server (tests/llm_server.py)
   answering every request after a fixed `--latency` seconds: windows/s at each
   concurrency (LLM_CONCURRENCY), gleaning off so a window is one request, every run cold
   (cache and graph emptied first) so every window is sent. Two measures: "requests" is
   the LLM stage alone (request, parse, stored run, its calls and token accounting);
   "end_to_end" adds writing entities, mentions, relations and evidence (overlapping the
   requests in flight). Goal: >= 80 % of concurrency / latency.
2. The offline (spaCy) extractor's windows/s over windows of the same size on this machine.

Windows are ~1,200 tokens (EXTRACTION_WINDOW_TOKENS) of generated English with named people,
places and organisations. Uses its own database (`graphloom_bench`) on the embedded server.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    # Set-up only when run as a script: the parser's child process ("spawn") imports this
    # file again and must stay light.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run(
        "bench.extract_run",
        media_prefix="graphloom-bench-media-",
        drop_env_prefixes=("LLM_", "EXTRACTION_"),
    )
