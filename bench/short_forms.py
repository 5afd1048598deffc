"""Short forms within a document: how well one document's shorter names ("Kestrel",
"Lindqvist", "KNS") end up on the entity of the full name they stand for.

    .venv/bin/python bench/short_forms.py [--data bench/data/short_forms.jsonl] [--keep]

Each line of the labelled set (bench/data/short_forms.jsonl, made by
bench/data/make_short_forms.py) is a fictional document, a perfect extractor's output for
it (names, types, spans) and the gold entity of every name. The documents go through the
real write path, in order, into one workspace: a document, its chunk and windows, one
extraction run per window holding that output, then `Materializer` (resolution, the
curation actions it calls, the evidence funnel), exactly as extraction writes them.
Printed: pairwise precision and recall of the resulting entity clusters (two mentions are
a pair when they are on one entity; merged entities followed to their survivor), over all
mentions and over pairs within one document, plus the review queue and the aliases made.
Uses its own database (`graphloom_bench`) on the embedded server.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run("bench.short_forms_run")
