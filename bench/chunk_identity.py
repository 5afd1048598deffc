"""Does a chunker change move the panel? Every document of the panel's database, chunked by
`ingest/chunking.py` as it was at a commit and as it is now, with the pipeline's settings
(the model's tokenizer, its token budget, the configured overlap):

    .venv/bin/python bench/chunk_identity.py --before REV

Prints the documents, characters and chunks per corpus and how many documents' chunks
(start, end, token count, heading path) differ, with each chunker's CPU time. When none
differ, the chunks, so the embeddings and what extraction reads, are the same as the
panel's build: its figures cannot move by this change. Reads the panel database
(`graphloom_panel`, or GRAPHLOOM_PANEL_DB_NAME; `bench/panel.py build` writes it).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run(
        "bench.chunk_identity_run",
        env={"GRAPHLOOM_DB_NAME": os.environ.get("GRAPHLOOM_PANEL_DB_NAME", "graphloom_panel")},
    )
