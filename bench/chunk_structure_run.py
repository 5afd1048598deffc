"""The chunk-structure benchmark itself; run it through bench/chunk_structure.py."""

from __future__ import annotations

import argparse
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from ingest import boilerplate
from ingest.chunking import chunk_text
from ingest.embeddings import TokenCounter, get_token_counter
from ingest.parsers.base import ParseError, ParserLimits
from ingest.parsers.html import parse_html

_JAVADOC = "/usr/share/doc/openjdk-17-jre-headless/api"
# (generator, directory, glob): the Debian documentation packages the project may read.
CORPORA = (
    ("AsciiDoc (git-doc)", "/usr/share/doc/git-doc", "*.html"),
    ("DocBook (debian-handbook)", "/usr/share/doc/debian-handbook/html/en-US", "*.html"),
    ("Javadoc (openjdk-17)", f"{_JAVADOC}/java.base/java/util", "*.html"),
    ("mdBook (rust book)", "/usr/share/doc/rust-doc/html/book", "*.html"),
    ("Sphinx (django ref)", "/usr/share/doc/python-django-doc/html/ref", "**/*.html"),
    ("Sphinx (python3.11 library)", "/usr/share/doc/python3.11/html/library", "*.html"),
)  # fmt: skip
_HEADING_LINE = re.compile(r"^#{1,6}\s+\S")
_FENCE = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[ \t]*$|`[^`\n]+`", re.M | re.S)
_ESCAPE = re.compile(r"\\[!-/:-@\[-`{-~]")


@dataclass
class Tally:
    pages: int = 0
    failed: int = 0
    boilerplate: int = 0
    chunks: int = 0
    with_path: int = 0
    heading_only: int = 0
    bracket: int = 0
    paren: int = 0
    emphasised_code: int = 0
    any_escape: int = 0
    tokens: list[int] = field(default_factory=list)
    examples: dict[str, str] = field(default_factory=dict)


def _prose(text: str, start: int, end: int) -> str:
    """The document's text from `start` to `end` without its code (fenced blocks and inline
    spans, found in the whole text: a chunk may start inside a code block)."""
    kept, position = [], start
    for code in _FENCE.finditer(text):
        if code.end() <= start or code.start() >= end:
            continue
        kept.append(text[position : max(position, code.start())])
        position = max(position, code.end())
    kept.append(text[position:end])
    return "".join(kept)


def _pages(directory: str, pattern: str, count: int) -> list[Path]:
    paths = sorted(p for p in Path(directory).glob(pattern) if p.is_file())
    if len(paths) <= count:
        return paths
    step = len(paths) / count
    return [paths[int(i * step)] for i in range(count)]


def _measure(paths: list[Path], counter: TokenCounter, budget: int) -> Tally:
    tally = Tally()
    parsed_pages = []
    for path in paths:
        try:
            parsed_pages.append(
                (path, parse_html(path.read_bytes(), filename=path.name, limits=ParserLimits()))
            )
        except ParseError:
            tally.failed += 1
    seen: Counter[str] = Counter()
    for _, parsed in parsed_pages:
        seen.update(boilerplate.fingerprints(boilerplate.lines(parsed.text)))
    repeated = {f for f, n in seen.items() if n >= settings.BOILERPLATE_MIN_DOCUMENTS}
    for path, parsed in parsed_pages:
        tally.pages += 1
        spans = boilerplate.boilerplate_spans(
            boilerplate.lines(parsed.text), repeated, min_chars=settings.BOILERPLATE_MIN_CHARS
        )
        for chunk in chunk_text(
            parsed.text,
            counter=counter,
            max_tokens=budget,
            overlap_tokens=32,
            boilerplate=spans,
        ):
            if chunk.boilerplate:
                tally.boilerplate += 1
                continue
            tally.chunks += 1
            tally.tokens.append(chunk.token_count)
            text = chunk.text
            prose = _prose(parsed.text, chunk.start, chunk.end)
            tally.with_path += bool(chunk.heading_path)
            lone = all(_HEADING_LINE.match(line) for line in text.splitlines() if line.strip())
            if lone:
                tally.heading_only += 1
                tally.examples.setdefault("heading_only", f"{path.name}: {text[:80]!r}")
            if not chunk.heading_path:
                tally.examples.setdefault("no_path", f"{path.name}: {text[:80]!r}")
            tally.bracket += "\\[" in prose
            tally.paren += "\\(" in prose
            tally.emphasised_code += "*`" in prose
            if _ESCAPE.search(prose):
                tally.any_escape += 1
                found = _ESCAPE.search(prose)
                assert found
                at = found.start()
                tally.examples.setdefault(
                    "escape", f"{path.name}: {prose[max(0, at - 40) : at + 40]!r}"
                )
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--examples", action="store_true", help="print one example per failure")
    args = parser.parse_args()
    counter, budget = get_token_counter()
    header = (
        "| generator | pages | chunks | with heading path | heading-only chunks | `\\[` | `\\(` "
        "| `` *` `` | any `\\` escape | median tokens | chunks < 32 tokens |"
    )
    print(header)
    print("|" + "---|" * header.count(" | ") + "---|")
    for name, directory, pattern in CORPORA:
        tally = _measure(_pages(directory, pattern, args.pages), counter, budget)
        share = tally.with_path / tally.chunks if tally.chunks else 0.0
        print(
            f"| {name} | {tally.pages} | {tally.chunks} | {share:.3f} | {tally.heading_only} "
            f"| {tally.bracket} | {tally.paren} | {tally.emphasised_code} | {tally.any_escape} "
            f"| {statistics.median(tally.tokens) if tally.tokens else 0:.0f} "
            f"| {sum(n < 32 for n in tally.tokens)} |"
        )
        if args.examples:
            for kind, example in tally.examples.items():
                print(f"    {kind}: {example}")
