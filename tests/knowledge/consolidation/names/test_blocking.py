"""Blocking keys (knowledge/consolidation/names/blocking.py), measured against the labelled
pairs in tests/fixtures/entity_pairs.jsonl. Pure functions: no database."""

from __future__ import annotations

import itertools

import pytest

from knowledge.consolidation.names.blocking import MAX_BLOCKING_KEYS, blocking_keys
from knowledge.consolidation.names.normalise import suffixes_for_type

# --- blocking keys ---------------------------------------------------------------------------


def test_blocking_keys_of_a_name():
    keys = blocking_keys("International Business Machines Corporation")
    assert keys[0] == "international business machine"
    assert "a:ibm" in keys
    assert {"machine", "p:mach", "s:hine"} <= set(keys)
    assert "a:ibm" in blocking_keys("I.B.M.")
    assert "a:mmm" in blocking_keys("3M")
    assert blocking_keys("") == []
    assert blocking_keys("Apple Inc.") == blocking_keys("Apple Inc.")  # deterministic


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("IBM", "International Business Machines"),
        ("Microsft", "Microsoft"),
        ("Node.js", "NodeJS"),
        ("Vue.js", "Vue"),
        ("Face book", "Facebook"),
        ("J. R. R. Tolkien", "Tolkien"),
        ("WWII", "World War II"),
        ("JS", "JavaScript"),
    ],
)
def test_names_that_may_be_one_entity_share_a_blocking_key(a, b):
    assert set(blocking_keys(a)) & set(blocking_keys(b))


def test_blocking_keys_are_bounded_and_unique():
    long_title = " ".join(f"Chapter{i} Section{i} Paragraph{i}" for i in range(40))
    for name in [long_title, "An Inquiry into the Nature and Causes of the Wealth of Nations"]:
        keys = blocking_keys(name)
        assert 0 < len(keys) <= MAX_BLOCKING_KEYS == 24
        assert len(keys) == len(set(keys))


def test_same_pairs_of_the_fixture_share_a_blocking_key(pairs):
    same = [p for p in pairs if p["same"]]
    missed = []
    for p in same:
        suffixes = suffixes_for_type(p["type"])
        a = set(blocking_keys(p["a"], suffixes=suffixes))
        b = set(blocking_keys(p["b"], suffixes=suffixes))
        if not a & b:
            missed.append((p["a"], p["b"]))
    assert 1 - len(missed) / len(same) >= 0.98, missed


def test_unrelated_names_rarely_share_a_blocking_key(pairs):
    labelled = {frozenset((p["a"], p["b"])) for p in pairs}
    by_type: dict[str, set[str]] = {}
    for p in pairs:
        by_type.setdefault(p["type"], set()).update((p["a"], p["b"]))
    compared = shared = 0
    for entity_type, names in by_type.items():
        suffixes = suffixes_for_type(entity_type)
        keys = {n: set(blocking_keys(n, suffixes=suffixes)) for n in names}
        for a, b in itertools.combinations(sorted(names), 2):
            if frozenset((a, b)) not in labelled:
                compared += 1
                shared += bool(keys[a] & keys[b])
    assert compared > 10_000
    assert shared / compared < 0.03
