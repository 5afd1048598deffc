"""The caps measurement itself; run it through bench/extraction_caps.py (see there)."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from ingest.chunking import chunk_text
from ingest.embeddings import get_token_counter
from ingest.parsers.base import ParserLimits
from ingest.parsers.formats import parse
from knowledge.actions.schema import DEFAULT_ENTITY_TYPES
from knowledge.extraction.offline import get_offline_extractor
from knowledge.extraction.validation import validate_window
from knowledge.extraction.windows import build_windows

CORPORA = {
    "django": Path("/usr/share/doc/python-django-doc/html/topics"),
    "python": Path("/usr/share/doc/python3.11/html/library"),
    "handbook": Path("/usr/share/doc/debian-handbook/html/en-US"),
}
CAPS = {"60/120": (60, 120), "20/30": (20, 30)}


@dataclass(frozen=True)
class _Chunk:
    pk: int
    ordinal: int
    char_start: int
    char_end: int
    token_count: int
    content_hash: str


@dataclass
class _Kept:
    entities: int = 0
    relations: int = 0
    relations_with_both_ends: int = 0
    names: set[tuple[str, str]] = field(default_factory=set)
    edges: set[tuple[str, str, str]] = field(default_factory=set)


def measure(root: Path, pages: int) -> dict[str, Any]:
    counter, max_tokens = get_token_counter()
    types = [name for name, _, _ in DEFAULT_ENTITY_TYPES]
    extractor = get_offline_extractor()
    found: dict[str, Any] = {"pages": 0, "windows": 0, "over_20_entities": 0}
    found |= {"over_30_relations": 0, "over_60_entities": 0, "over_120_relations": 0}
    kept = {label: _Kept() for label in CAPS}
    started = time.perf_counter()
    for page in sorted(root.rglob("*.html"))[:pages]:
        found["pages"] += 1
        text = parse(page.read_bytes(), filename=page.name, limits=ParserLimits()).text
        spans = chunk_text(text, counter=counter, max_tokens=max_tokens, overlap_tokens=32)
        chunks = [
            _Chunk(i + 1, i, s.start, s.end, s.token_count, s.content_hash)
            for i, s in enumerate(spans)
            if not s.boilerplate
        ]
        target = settings.EXTRACTION_WINDOW_TOKENS
        for window in build_windows(text, chunks, target_tokens=target):
            raw = extractor.extract(window.text, entity_types=types)
            found["windows"] += 1
            found["over_20_entities"] += len(raw.entities) > 20
            found["over_30_relations"] += len(raw.relations) > 30
            found["over_60_entities"] += len(raw.entities) > 60
            found["over_120_relations"] += len(raw.relations) > 120
            for label, (entities, relations) in CAPS.items():
                capped = validate_window(raw, max_entities=entities, max_relations=relations)
                tally = kept[label]
                names = {e.name.casefold() for e in capped.entities}
                ends = [
                    r
                    for r in capped.relations
                    if r.source.casefold() in names and r.target.casefold() in names
                ]
                tally.entities += len(capped.entities)
                tally.relations += len(capped.relations)
                tally.relations_with_both_ends += len(ends)
                tally.names.update((e.name.casefold(), e.type) for e in capped.entities)
                tally.edges.update((r.source.casefold(), r.target.casefold(), r.type) for r in ends)
    found["seconds"] = round(time.perf_counter() - started)
    for label, tally in kept.items():
        found[label] = {
            "entity_records": tally.entities,
            "relation_records": tally.relations,
            "relations_with_both_ends": tally.relations_with_both_ends,
            "distinct_entities": len(tally.names),
            "distinct_relations": len(tally.edges),
        }
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description="What the per-window caps cut; see the script.")
    parser.add_argument("--pages", type=int, default=60)
    args = parser.parse_args()
    for name, root in CORPORA.items():
        if not root.exists():
            print(json.dumps({name: "missing: install its Debian package"}), flush=True)
            continue
        print(json.dumps({name: measure(root, args.pages)}), flush=True)
