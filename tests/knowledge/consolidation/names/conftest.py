"""The labelled pairs of tests/fixtures/entity_pairs.jsonl, shared by the tests of the name
rules measured against them (blocking, similarity, thresholds). Pure: no database."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.consolidation_quality import load_pairs

PAIRS_FILE = Path(__file__).resolve().parents[3] / "fixtures" / "entity_pairs.jsonl"


@pytest.fixture(scope="module")
def pairs() -> list[dict]:
    return load_pairs(PAIRS_FILE)
