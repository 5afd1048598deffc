"""The quality panel (issue 39): real corpora from many documentation generators and formats,
each brought in as a user would, with one table of figures per corpus.

    .venv/bin/python bench/panel.py build [CORPUS ...] [--split tuning|judged] [--profile F]
    .venv/bin/python bench/panel.py retrieval [CORPUS ...] [--split tuning|judged]
    .venv/bin/python bench/panel.py sample CORPUS [--seed 39]
    .venv/bin/python bench/panel.py table [--split tuning|judged] [--markdown]
    .venv/bin/python bench/panel.py pages [CORPUS ...]

The corpora are listed in bench/panel_corpora.py (Debian packages: install them first, e.g.
`apt-get install python3.11-doc python-django-doc git-doc rust-doc openjdk-17-doc
debian-handbook r-doc-pdf nodejs-doc octave-doc`). Each has a folder
bench/data/panel/<corpus>/ holding what is kept in the repository: `pages.txt` (the pages the
crawl fetches), `questions.jsonl` (labelled questions: single-page lines with `answers`,
multi-hop lines with `requires`), the labelled samples `hubs.jsonl`, `entities.jsonl` and
`relations.jsonl`, and the last run's figures, `figures.json` and `retrieval.json`, each
with the commit it was measured at.

`build` brings each corpus into a fresh workspace (HTML: served by Python's http.server and
crawled recursively with the offline extractor, one process doing the work a worker would;
files: uploaded one by one), with the models loaded first, and records end-to-end speed
(crawl to consolidated graph: chunks per second), structure figures (chunks with a heading
path, chunks that are only a heading, markup escapes left in chunk text) and graph figures
(entities, relations, the share typed `related_to`, entities with no relation, entities
seen once, relation types). `retrieval` scores the corpus's questions with
`manage.py eval_retrieval` on the workspace `build` made (questions whose pages the
workspace lacks, after a corpus's cap came down, are left out and counted as
`questions_left_out`): the five rankings, the default
ranking's margin over the best single signal, and on multi-hop questions full-support
recall@10 with hybrid+graph against hybrid. `sample` writes the labelling files (top-100
hubs, a seeded random 60 entities, a seeded random 60 relations with the sentence that states
each), with the labels null for a person to fill in; labels already given to the same row
(same name and type, same relation) are kept. `table` prints one line per corpus from the
stored figures and the labelled samples. `pages` lists what a crawl would fetch (no
processing) into pages.txt, for writing questions.

Judged-only corpora (split "judged") are built and scored like the others, but nobody who
changes the code reads their pages, samples or questions: only their figures, once a round.
Uses its own database (`graphloom_panel`, or GRAPHLOOM_PANEL_DB_NAME).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run(
        "bench.panel_run",
        env={
            "GRAPHLOOM_DB_NAME": os.environ.get("GRAPHLOOM_PANEL_DB_NAME", "graphloom_panel"),
            "GRAPHLOOM_CRAWL_ALLOWED_NETWORKS": "127.0.0.0/8",
        },
        media_prefix="graphloom-panel-media-",
        drop_env_prefixes=("LLM_", "EXTRACTION_"),
    )
