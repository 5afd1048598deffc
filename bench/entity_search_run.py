"""The entity search benchmark itself; run it through bench/entity_search.py (see there)."""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from django.core.management import call_command
from django.db import connection

from bench.cleanup import drop_workspace
from bench.consolidation_run import seed
from knowledge.models import Alias, AliasOrigin, Entity, EntityWord, WordTypoKey
from knowledge.selectors.entities import search_entities
from workspaces.models import Workspace


def queries(names: list[tuple[str, str]], rng: random.Random) -> dict[str, list[str]]:
    """Queries of each kind, built from names that are in the workspace."""
    picked = rng.sample(names, 40)
    out: dict[str, list[str]] = {
        "whole name": [],
        "name start": [],
        "later word": [],
        "word start": [],
        "one typo": [],
        "two words": [],
    }
    for name, _ in picked:
        words = name.split()
        last = max(words[1:] or words, key=len)
        out["whole name"].append(name)
        out["name start"].append(name[:5])
        out["later word"].append(last)
        out["word start"].append(last[:4])
        i = rng.randrange(1, len(last) - 1)
        out["one typo"].append(last[:i] + last[i + 1 :])
        out["two words"].append(f"{last} {words[0][:3]}")
    out["common word start"] = ["Sys", "Lab", "Rob", "Ene", "Cap", "Med"]
    return {kind: items[:6] for kind, items in out.items()}


def ask(workspace: Workspace, q: str) -> tuple[float, int]:
    """One API-shaped search: the first page of 20 and the total count."""
    started = time.perf_counter()
    found = search_entities(workspace, q=q)
    page = list(found[:20])
    total = found.count()
    return (time.perf_counter() - started) * 1000, total if page or total else 0


def main() -> None:
    parser = argparse.ArgumentParser(description="Entity search benchmark.")
    parser.add_argument("--size", type=int, default=100000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    rng = random.Random(7)
    started = time.perf_counter()
    workspace, _, names = seed(args.size, rng)
    entities = list(Entity.objects.filter(workspace=workspace).values_list("pk", "name")[:2000])
    Alias.objects.bulk_create(
        [
            Alias(workspace=workspace, entity_id=pk, name=f"{name.split()[0]} Alias",
                  canonical=f"{name.split()[0].lower()} alias {pk}", origin=AliasOrigin.MANUAL)
            for pk, name in entities
        ]
    )  # fmt: skip
    # As autovacuum leaves them once the writes settle (visibility maps set, statistics).
    with connection.cursor() as cursor:
        for table in ("knowledge_entity", "knowledge_alias", "knowledge_entityword",
                      "knowledge_wordtypokey"):  # fmt: skip
            cursor.execute(f"VACUUM ANALYZE {table}")
    seeded = time.perf_counter() - started
    try:
        by_kind = queries(names, rng)
        times: dict[str, list[float]] = {kind: [] for kind in by_kind}
        found: dict[str, list[int]] = {kind: [] for kind in by_kind}
        each: dict[tuple[str, str], list[float]] = {}
        for items in by_kind.values():
            for q in items:
                ask(workspace, q)  # warm
        for _ in range(args.runs):
            for kind, items in by_kind.items():
                for q in items:
                    ms, total = ask(workspace, q)
                    times[kind].append(ms)
                    found[kind].append(total)
                    each.setdefault((kind, q), []).append(ms)
        report = {
            "entities": args.size,
            "words": EntityWord.objects.filter(workspace=workspace).count(),
            "typo_keys": WordTypoKey.objects.filter(workspace=workspace).count(),
            "seed_seconds": round(seeded, 1),
            "median_ms": {k: round(statistics.median(v), 2) for k, v in times.items()},
            "p90_ms": {k: round(statistics.quantiles(v, n=10)[-1], 2) for k, v in times.items()},
            "median_matches": {k: statistics.median(v) for k, v in found.items()},
            "median_ms_all": round(statistics.median([t for v in times.values() for t in v]), 2),
            "slowest_queries_median_ms": sorted(
                ((round(statistics.median(v), 1), kind, q) for (kind, q), v in each.items()),
                reverse=True,
            )[:5],
        }
        print(json.dumps(report, indent=2))
    finally:
        if not args.keep:
            drop_workspace(workspace)
