"""bench/chunk_identity.py's run (Django is set up by then)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

from django.conf import settings
from django.db import connection

from ingest.chunking import chunk_text
from ingest.embeddings import get_token_counter

ROOT = Path(__file__).resolve().parent.parent


def chunker_at(revision: str, directory: Path) -> ModuleType:
    """`ingest/chunking.py` as it was at `revision`, imported under another name."""
    source = subprocess.run(
        ["git", "show", f"{revision}:ingest/chunking.py"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    path = directory / "chunking_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("chunking_before", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["chunking_before"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def spans(chunker: Any, text: str, options: dict[str, Any]) -> tuple[list[tuple], float]:
    start = cpu()
    chunks = [(c.start, c.end, c.token_count, c.heading_path) for c in chunker(text, **options)]
    return chunks, cpu() - start


def documents() -> list[tuple[str, str]]:
    """(workspace slug, text) of every document, in raw SQL: the panel's database may be at
    an older migration than this code's models."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT w.slug, d.text FROM ingest_document d"
            " JOIN workspaces_workspace w ON w.id = d.workspace_id ORDER BY w.slug, d.id"
        )
        return [(slug, text) for slug, text in cursor.fetchall() if text]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", required=True, help="the commit to compare with")
    args = parser.parse_args()
    counter, budget = get_token_counter()
    options = {
        "counter": counter,
        "max_tokens": settings.CHUNK_MAX_TOKENS or budget,
        "overlap_tokens": settings.CHUNK_OVERLAP_TOKENS,
    }
    per: dict[str, Counter[str]] = {}
    seconds = Counter[str]()
    with tempfile.TemporaryDirectory() as directory:
        before = chunker_at(args.before, Path(directory))
        for slug, text in documents():
            old, old_cpu = spans(before.chunk_text, text, options)
            new, new_cpu = spans(chunk_text, text, options)
            seconds.update({"before": old_cpu, "now": new_cpu})
            tally = per.setdefault(slug, Counter())
            tally.update(
                {"documents": 1, "characters": len(text), "chunks": len(new), "differ": old != new}
            )
    total = {
        key: sum(t[key] for t in per.values())
        for key in ("documents", "characters", "chunks", "differ")
    }
    cpu_seconds = {name: round(value, 1) for name, value in seconds.items()}
    report = {"before": args.before, "corpora": per, "total": total, "cpu_seconds": cpu_seconds}
    print(json.dumps(report, indent=1))
