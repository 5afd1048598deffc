"""The consolidation benchmark itself; run it through bench/consolidation.py (see there)."""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

from django.core.management import call_command
from django.db import transaction

from knowledge.actions.schema import do_ensure_default_schema
from knowledge.consolidation.resolution import (
    entity_blocking_keys,
    entity_key,
    resolve_entities,
)
from knowledge.models import Entity, EntityType
from workspaces.actions.workspaces import do_create_workspace
from workspaces.models import Workspace

PAIRS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "entity_pairs.jsonl"

FIRST = [
    a + b
    for a in ("Al", "Be", "Ca", "Da", "El", "Fa", "Ga", "Ha", "Io", "Ja", "Ka", "Lu", "Ma",
              "Na", "Ol", "Pa", "Ra", "Sa", "Ta", "Va")
    for b in ("n", "ra", "lia", "ton", "mir", "ssa", "vin", "dor", "ena", "rik", "ley", "mon",
              "ina", "tas", "yan")
]  # fmt: skip
LAST = [
    a + b
    for a in ("Ander", "Bering", "Castel", "Dorn", "Eber", "Falk", "Gruber", "Hartl", "Ivers",
              "Jansen", "Kowal", "Lind", "Moser", "Nagel", "Ortiz", "Pohl", "Quast", "Ried",
              "Stahl", "Thal", "Ullm", "Vogt", "Wendt", "Xander", "Yilm", "Zeller")
    for b in ("son", "mann", "berg", "ski", "ez", "er", "ova", "ini", "sen", "ley", "holm",
              "dal", "ford", "wick", "stein", "ow", "ard", "ing", "et", "ic")
]  # fmt: skip
WORDS = [
    "Blue", "Quantum", "River", "Summit", "Nordic", "Vertex", "Cedar", "Atlas", "Nova",
    "Harbor", "Pioneer", "Granite", "Silver", "Bright", "Open", "Delta", "Falcon", "Iron",
    "Maple", "Orbit", "Prairie", "Crest", "Lumen", "Ember", "Cobalt",
]  # fmt: skip
SECTORS = [
    "Systems", "Labs", "Foods", "Logistics", "Energy", "Health", "Robotics", "Media",
    "Capital", "Materials", "Networks", "Analytics", "Motors", "Pharma", "Studios",
]  # fmt: skip
SUFFIXES = ["Inc.", "Ltd", "GmbH", "Corp", "LLC", "AG", "plc", ""]


def generated_names(count: int, rng: random.Random) -> list[tuple[str, str]]:
    """Distinct (name, type) pairs, mixed types."""
    seen: set[tuple[str, str]] = set()
    out: list[tuple[str, str]] = []
    while len(out) < count:
        roll = rng.random()
        if roll < 0.45:
            item = (f"{rng.choice(FIRST)} {rng.choice(LAST)}", "person")
        elif roll < 0.8:
            item = (
                f"{rng.choice(WORDS)} {rng.choice(WORDS)} {rng.choice(SECTORS)}",
                "organization",
            )
        elif roll < 0.9:
            item = (f"{rng.choice(LAST)}{rng.choice(['ville', 'burg', 'ton', 'field'])}",
                    "location")  # fmt: skip
        else:
            item = (f"{rng.choice(WORDS)}{rng.choice(SECTORS)} {rng.randint(1, 99)}", "product")
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
    fresh = iter(generated_names(count * 2, random.Random(rng.random())))
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


def measure(size: int, new: int, batch: int) -> dict[str, float]:
    rng = random.Random(size)
    workspace, types, existing = seed(size, rng)
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
        "graph_size": size,
        "new_names": new,
        "seconds": round(elapsed, 2),
        "names_per_s": round(new / elapsed, 1),
        "entities_created": created,
    }


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
        runs = [measure(size, args.new, args.batch) for _ in range(args.runs)]
        row = dict(runs[0])
        row["names_per_s"] = statistics.median(r["names_per_s"] for r in runs)
        results.append(row)
        print(json.dumps(row), flush=True)
    base = results[0]["names_per_s"]
    print(json.dumps({"summary": [
        {"graph_size": r["graph_size"], "names_per_s": r["names_per_s"],
         "ratio_to_smallest": round(r["names_per_s"] / base, 3)} for r in results
    ]}), flush=True)  # fmt: skip
