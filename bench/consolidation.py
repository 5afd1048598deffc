"""Consolidation benchmark (issue 6).

    .venv/bin/python bench/consolidation.py [--sizes 20000 50000 100000 200000] [--new 50000]
                                            [--batch 100] [--quality-only]

(a) Quality: the labelled name pairs of tests/fixtures/entity_pairs.jsonl through the
    similarity and per-type thresholds (bench/consolidation_quality.py): pairwise precision
    and recall of automatic merges without an LLM, and the review queue left.
(b) Cost: a workspace is filled with `size` generated entities (people, organisations,
    places, products with numbers), then `--new` extracted names are resolved into it in
    batches of `--batch` (as extraction does per window): a third exact variants of existing
    names (case, suffixes, accents, plurals), a fifth typos of existing names, the rest new.
    Reported: new names/s at each graph size, and the ratio to the smallest size (the goal
    is near-constant: cost grows with the new names, not with the graph).
Uses its own database (`graphloom_bench`) on the embedded server.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run("bench.consolidation_run")
