"""Graph quality on real documentation (issue 15): crawl a real manual, sample what came out.

    .venv/bin/python bench/doc_quality.py crawl [--root /usr/share/doc/python3.11/html]
        [--max-pages 600] [--sample 200] [--seed 15] --out bench/data/python-docs-after.jsonl
    .venv/bin/python bench/doc_quality.py score bench/data/python-docs-after.jsonl
    .venv/bin/python bench/doc_quality.py recheck bench/data/python-docs-after.jsonl
        [--workspace docs-…]
    .venv/bin/python bench/doc_quality.py speed [--max-pages 150] [--start library/index.html]
        [--allow /library/] [--profile crawl.prof]
    .venv/bin/python bench/doc_quality.py headings [--workspace docs-…]
    .venv/bin/python bench/doc_quality.py homonyms [--workspace docs-…] [--sample 60]
        [--seed 20] [--out bench/data/python-docs-homonyms.jsonl]
    .venv/bin/python bench/doc_quality.py homonyms --score bench/data/python-docs-homonyms.jsonl
    .venv/bin/python bench/doc_quality.py review [--workspace docs-…] [--sample 40] [--seed 5]
    .venv/bin/python bench/doc_quality.py consolidation [--workspace docs-…] [--sample 10]
        [--seed 9] [--out bench/data/python-docs-merges-after.jsonl]
    .venv/bin/python bench/doc_quality.py consolidation
        --score bench/data/python-docs-merges-after.jsonl

`crawl` serves the manual's directory from a local HTTP server (Python's http.server, as a
person would), crawls it recursively into a fresh workspace with the offline extractor (no
LLM: LLM_* variables are dropped), and prints JSON: pages, words, entities, entities per
1,000 words, relations and the typed share (not `related_to`), extraction throughput
(windows per second of extractor time), boilerplate chunks extracted (mentions whose chunk is
boilerplate: the goal is 0), the quality report, and the 50 best-connected entities; the
same JSON goes beside `--out` as `*.figures.json`. It writes a seeded random sample of
entities to `--out`, one JSON object per line with `name_ok` and `type_ok` left null for a
person to label (yes/no: is the name a real, useful entity; is its type right).

`score` reads a labelled sample and prints name precision (share of name_ok) and type
precision (share of type_ok among the entities whose name is ok). Goals: >= 0.85, >= 0.75.

`recheck` looks up every entity of a labelled sample in a later crawl (the latest in the
database, or `--workspace`): when each is still an active entity with the same name and
type, the sample's labels, and so its precision figures, describe the later graph's sample
as well; the rest are listed (other type, missing). For a change of the extractor that a
fresh sample would need a person to label again.

`speed` crawls part of the manual the same way (default: the first 150 pages of `library/`)
with the models loaded first, then runs `model.encode` alone on the same chunk texts (as
bench/ingest.py does) and prints chunks per second end to end and for the model alone, their
ratio, the graph figures and `graph_digest` (a hash of every active entity and relation: two
runs that agree on it built the same graph); `--profile` writes cProfile stats of the crawl,
which runs the whole pipeline in this process. GRAPHLOOM_DOCS_DB_NAME picks the database.

`headings` compares a crawl's stored chunks (the latest, or `--workspace`) with what the
current chunker makes of the same documents: chunks, chunks ending with the opening fence of
a code block, and chunks whose heading path holds a code block's "# comment" (the chunker
once took those for headings).

`homonyms` counts the names a crawl holds as active entities of several types, and of those
the ones where one entity has the fallback type `concept` (the type when the extractor cannot
tell); with `--out` it writes a seeded sample of those, each the `concept` entity and the
entity of another type with most mentions, with their names and a few mentions in context,
`same` left null for a person to label (one thing typed two ways, or two things?). With
`--score` it reads a labelled sample and prints the share that is one thing, and the
precision and recall of the rule consolidation joins such names by (written the same way,
letter case included). bench/data/python-docs-homonyms.jsonl (seed 20, 60 pairs) is the
sample the rule was chosen on; python-docs-homonyms-heldout.jsonl (seed 21, the first 40
pairs not in it) was labelled before the rule was scored on it.

`review` scores a crawl's open review pairs again with the current name rules: of the pairs
of one type the spelling tier queued, how many it would no longer queue, with a seeded
sample of those to read; of the pairs the name embedding queued, how many two code names
the current rules tell apart (`code_paths_differ`).

`consolidation` reports what consolidation made of a crawl: its automatic merges by their
first reason, with a seeded sample of each to read (the survivor, then the merged names);
the open review pairs by their first reason; the active entities whose description begins
with a version or availability note, or still holds Markdown marks. With `--out` it writes
the samples, one merge a line with `same` left null for a person to label (did it join one
thing?); with `--score` it reads a labelled sample and prints, per reason, the share that
joined one thing and how many the current name rules alone would still make.

The manual is Debian's python3.11-doc (`apt-get install python3.11-doc`): 530 HTML pages
written by the Python project, nobody here. Uses its own database (`graphloom_docs`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run(
        "bench.doc_quality_run",
        env={
            "GRAPHLOOM_DB_NAME": os.environ.get("GRAPHLOOM_DOCS_DB_NAME", "graphloom_docs"),
            "GRAPHLOOM_CRAWL_ALLOWED_NETWORKS": "127.0.0.0/8",
        },
        media_prefix="graphloom-docs-media-",
        drop_env_prefixes=("LLM_", "EXTRACTION_"),
    )
