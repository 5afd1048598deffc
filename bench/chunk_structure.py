"""Structure of HTML pages as chunks, per documentation generator: how many chunks carry a
heading path, how many hold only a title, how many keep a Markdown escape.

    .venv/bin/python bench/chunk_structure.py [--pages 30] [--show NAME]

Reads ~30 pages (evenly spaced, sorted by name) of each generator's Debian documentation
package, parses them with the real HTML parser and chunks them with the real chunker and
the embedding model's tokenizer (no database, no boilerplate statistics: each page alone).
Printed, per generator: pages, chunks, the share of chunks with a heading path, chunks of
one line that are only a heading or the title, and chunks containing `\\[`, `\\(`,
`` *` `` (emphasis around code) or any other backslash escape of punctuation.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run("bench.chunk_structure_run")
