"""The python corpus's single-page questions for the panel: the labelled questions of the
whole manual (python-docs-questions*.jsonl, written and frozen earlier) whose answer pages
are all among the pages the panel crawls (panel/python/pages.txt).

    python3 bench/data/make_panel_python.py > bench/data/panel/python/questions.jsonl
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
pages = set((HERE / "panel" / "python" / "pages.txt").read_text().split())
for name in ("python-docs-questions.jsonl", "python-docs-questions-heldout.jsonl"):
    for line in (HERE / name).read_text().splitlines():
        question = json.loads(line)
        paths = [a for a in question["answers"] if not a.startswith("snippet:")]
        if paths and all(path in pages for path in paths):
            print(json.dumps(question, ensure_ascii=False))
