"""The consolidation benchmark itself; run it through bench/consolidation.py (see there)."""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

from django.core.management import call_command
from django.db import connection, transaction

from bench.cleanup import drop_workspace
from knowledge.actions.resolution import resolve_entities
from knowledge.actions.schema import do_ensure_default_schema
from knowledge.consolidation.keys import entity_blocking_keys, entity_key
from knowledge.models import Entity, EntityType
from workspaces.actions.workspaces import do_create_workspace
from workspaces.models import Workspace

PAIRS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "entity_pairs.jsonl"

SYLLABLES = ["ka", "lo", "mi", "ra", "ten", "vo", "sul", "dar", "ne", "bri", "gor", "lin",
             "tas", "pe", "rum", "sha", "vel", "ion", "cor", "ba", "dun", "fe", "hal", "ki",
             "mor", "nis", "ov", "pra", "quel", "sim"]  # fmt: skip
# New names' first words come from syllables the seeded graph never uses, so a "new" name is
# new however large the graph; their other words are shared with it, as in real text.
NEW_SYLLABLES = ["zu", "xe", "jy", "wo", "qi", "yx", "zor", "jex", "wum", "qua"]
SECTORS = [
    "Systems", "Labs", "Foods", "Logistics", "Energy", "Health", "Robotics", "Media",
    "Capital", "Materials", "Networks", "Analytics", "Motors", "Pharma", "Studios",
]  # fmt: skip
SUFFIXES = ["Inc.", "Ltd", "GmbH", "Corp", "LLC", "AG", "plc", ""]


def _word(rng: random.Random, syllables: list[str], parts: int) -> str:
    return "".join(rng.choice(syllables) for _ in range(parts)).capitalize()


def _common(rng: random.Random, pool: list[str]) -> str:
    """A word drawn with a heavy tail: a few are in thousands of names (the "Smith"s and
    "Systems" that make blocking keys crowded), most in a handful."""
    return pool[int(len(pool) ** rng.random()) - 1]  # log-uniform rank: the top one ~1/ln(n)


def generated_names(
    count: int, rng: random.Random, *, fresh: bool = False
) -> list[tuple[str, str]]:
    """Distinct (name, type) pairs, mixed types: people, organisations, places, products."""
    first = NEW_SYLLABLES if fresh else SYLLABLES
    surnames = [_word(random.Random(i), SYLLABLES, 3) for i in range(20000)]
    brands = [_word(random.Random(-i), SYLLABLES, 2) for i in range(5000)]
    seen: set[tuple[str, str]] = set()
    out: list[tuple[str, str]] = []
    while len(out) < count:
        roll = rng.random()
        head = _word(rng, first, 2) + _word(rng, SYLLABLES, 1).lower()
        if roll < 0.45:
            item = (f"{head} {_common(rng, surnames)}", "person")
        elif roll < 0.8:
            item = (f"{head} {_common(rng, brands)} {rng.choice(SECTORS)}", "organization")
        elif roll < 0.9:
            item = (f"{head}{rng.choice(['ville', 'burg', 'ton', 'field'])}", "location")
        else:
            item = (f"{_common(rng, brands)} {head} {rng.randint(1, 99)}", "product")
        if (entity_key(*item), item[1]) not in seen:
            seen.add((entity_key(*item), item[1]))
            out.append(item)
    return out


def variant(name: str, kind: str, rng: random.Random) -> str:
    if kind == "organization":
        return f"{name} {rng.choice(SUFFIXES)}".strip()
    return rng.choice([name.upper(), name.lower(), f"the {name}" if kind != "person" else name])


def typo(name: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(name) - 1)
    return name[:i] + name[i + 1 :] if name[i] != " " else name + "s"


def seed(size: int, rng: random.Random) -> tuple[Workspace, dict[str, EntityType], list]:
    workspace = do_create_workspace(slug=f"bench-consolidation-{size}-{time.time_ns()}")
    do_ensure_default_schema(workspace=workspace)
    types = {t.name: t for t in EntityType.objects.filter(workspace=workspace)}
    names = generated_names(size, rng)
    for start in range(0, size, 5000):
        Entity.objects.bulk_create(
            [
                Entity(
                    workspace=workspace,
                    name=name,
                    canonical_name=entity_key(name, kind),
                    type=types[kind],
                    blocking_keys=entity_blocking_keys(name, kind),
                    mention_count=rng.randint(1, 20),
                )
                for name, kind in names[start : start + 5000]
            ]
        )
    return workspace, types, names


def new_names(existing: list, count: int, rng: random.Random) -> list[tuple[str, str]]:
    fresh = iter(generated_names(count, random.Random(rng.random()), fresh=True))
    out = []
    for _ in range(count):
        roll = rng.random()
        name, kind = rng.choice(existing)
        if roll < 0.33:
            out.append((variant(name, kind, rng), kind))
        elif roll < 0.53:
            out.append((typo(name, rng), kind))
        else:
            out.append(next(fresh))
    return out


def measure(
    workspace: Workspace,
    types: dict[str, EntityType],
    existing: list,
    *,
    new: int,
    batch: int,
    seed_value: int,
) -> dict[str, float]:
    """Resolve `new` extracted names into the workspace, `batch` per transaction."""
    rng = random.Random(seed_value)
    incoming = new_names(existing, new, rng)
    before = Entity.objects.filter(workspace=workspace).count()
    started = time.perf_counter()
    for start in range(0, len(incoming), batch):
        with transaction.atomic():
            resolve_entities(
                workspace,
                [(name, types[kind]) for name, kind in incoming[start : start + batch]],
                create=True,
            )
    elapsed = time.perf_counter() - started
    created = Entity.objects.filter(workspace=workspace).count() - before
    return {
        "graph_size": before,
        "new_names": new,
        "seconds": round(elapsed, 2),
        "names_per_s": round(new / elapsed, 1),
        "entities_created": created,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Consolidation benchmark; see bench/consolidation.py."
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[20000, 50000, 100000, 200000])
    parser.add_argument("--new", type=int, default=50000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--quality-only", action="store_true")
    args = parser.parse_args()
    from bench.consolidation_quality import evaluate, load_pairs

    quality = evaluate(load_pairs(PAIRS))
    print(json.dumps({"quality": {k: v for k, v in quality.items() if k != "errors"}}), flush=True)
    if args.quality_only:
        return
    call_command("migrate", verbosity=0)
    results = []
    for size in args.sizes:
        # One seeded workspace per size; each run resolves a different set of names into it
        # (so the graph grows a little from run to run: reported as graph_size).
        rng = random.Random(size)
        workspace, types, existing = seed(size, rng)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE knowledge_entity")  # as autovacuum would after a load
        runs = []
        for run in range(args.runs):
            runs.append(
                measure(workspace, types, existing, new=args.new, batch=args.batch,
                        seed_value=size * 100 + run)
            )  # fmt: skip
            print(json.dumps({"run": run + 1, **runs[-1]}), flush=True)
        drop_workspace(workspace)
        row = {
            "graph_size": size,
            "new_names": args.new,
            "runs": len(runs),
            "names_per_s": statistics.median(r["names_per_s"] for r in runs),
            "names_per_s_runs": [r["names_per_s"] for r in runs],
            "entities_created_per_run": [r["entities_created"] for r in runs],
        }
        results.append(row)
        print(json.dumps(row), flush=True)
    base = results[0]["names_per_s"]
    print(json.dumps({"summary": [
        {"graph_size": r["graph_size"], "names_per_s": r["names_per_s"],
         "ratio_to_smallest": round(r["names_per_s"] / base, 3)} for r in results
    ]}), flush=True)  # fmt: skip
