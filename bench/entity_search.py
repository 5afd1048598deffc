"""Entity search latency at 100k entities (any word by prefix, one typo, ranked).

    .venv/bin/python bench/entity_search.py [--size 100000] [--runs 5]

A workspace is filled with `size` generated entities (bench/consolidation_run.py's names:
people, organisations with sectors and legal suffixes, places, products with numbers;
common words in thousands of names) and a few aliases; the words and typo keys are those
the triggers of migration 0014 write. Then each query — a whole name, a name's start, a
surname, a word's start, a one-typo word, a two-word query, a common word's start — is
asked through `search_entities` as the API asks it (first page of 20 with the total
count), `runs` times; reported: the median per kind and over all, in milliseconds.
Uses its own database (`graphloom_bench`) on the embedded server.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run("bench.entity_search_run")
