"""What the per-window caps cut (issue 41: 60/120 became 20/30), on real manuals.

    .venv/bin/python bench/extraction_caps.py [--pages 60]

Each corpus's first `--pages` HTML pages (by path: Django's topics, Python's library
reference, the Debian handbook; `apt-get install python-django-doc python3.11-doc
debian-handbook`) are parsed, chunked with the embedding model's tokenizer and windowed as
the pipeline does (EXTRACTION_WINDOW_TOKENS), and the offline extractor runs once per window
without caps. Both caps are then applied to the same output. Printed per corpus: windows,
windows over each cap, and for 60/120 and 20/30 the entity and relation records kept, the
relations whose two ends are kept entities of the window (the others are dropped as
dangling by default), and the distinct entities (name, type) and relations across the
corpus, a first approximation of the graph's counts before consolidation. No database.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run("bench.extraction_caps_run", drop_env_prefixes=("LLM_", "EXTRACTION_"))
