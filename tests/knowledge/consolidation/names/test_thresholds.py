"""The per-type thresholds (knowledge/consolidation/names/thresholds.py), measured against
the labelled pairs in tests/fixtures/entity_pairs.jsonl. Pure functions: no database."""

from __future__ import annotations

import json
from collections import Counter

from bench.consolidation_quality import GOAL_PRECISION, GOAL_RECALL, evaluate
from knowledge.actions.schema import DEFAULT_ENTITY_TYPES
from knowledge.consolidation.names.thresholds import (
    DEFAULT_THRESHOLDS,
    TYPE_THRESHOLDS,
    thresholds_for,
)

TYPES = [name for name, _, _ in DEFAULT_ENTITY_TYPES]


# --- thresholds and the labelled pairs -------------------------------------------------------


def test_every_default_type_has_thresholds():
    assert set(TYPE_THRESHOLDS) == set(TYPES)
    for thresholds in [*TYPE_THRESHOLDS.values(), DEFAULT_THRESHOLDS]:
        assert 0 < thresholds.review < thresholds.auto_merge <= 1
    assert TYPE_THRESHOLDS["person"].auto_merge > TYPE_THRESHOLDS["organization"].auto_merge
    assert thresholds_for("spacecraft") == DEFAULT_THRESHOLDS


def test_fixture_is_a_curated_mix(pairs):
    assert len(pairs) >= 330
    assert {p["type"] for p in pairs} == set(TYPES)
    assert all(p["note"] for p in pairs)
    share = sum(p["same"] for p in pairs) / len(pairs)
    assert 0.40 <= share <= 0.50
    keys = Counter((p["type"], frozenset((p["a"], p["b"]))) for p in pairs)
    assert max(keys.values()) == 1  # no pair twice
    json.dumps(pairs)  # plain JSON values only


def test_thresholds_meet_the_goals_on_the_labelled_pairs(pairs):
    result = evaluate(pairs)
    auto = result["auto_merge"]
    assert auto["precision"] >= GOAL_PRECISION == 0.95, result["misclassified"]
    assert auto["recall"] >= GOAL_RECALL == 0.85, result["misclassified"]
    assert result["goals"]["met"]
    assert result["with_review"]["recall"] >= auto["recall"]
    assert result["review_queue"]["percent"] <= 20
    assert set(result["by_type"]) == set(TYPES)
