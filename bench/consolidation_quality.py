"""Consolidation quality: how well name similarity and the per-type thresholds decide merges.

    .venv/bin/python bench/consolidation_quality.py [--pairs tests/fixtures/entity_pairs.jsonl]

Each line of the pairs file is a hand-labelled pair of names of one entity type:
{"a": ..., "b": ..., "type": ..., "same": true|false, "note": ...}. For every pair,
`name_similarity` (with the type's corporate suffixes) gives a score and the type's
`Thresholds` a decision: "merge" at or above `auto_merge`, "review" in [review, auto_merge),
"separate" below. Printed as JSON:

- `auto_merge`: precision and recall of automatic merges (a same pair counts as found only
  when merged). Goals: precision >= 0.95, recall >= 0.85. Precision comes first: a wrong
  merge corrupts the graph, a missed one only leaves a duplicate.
- `with_review`: the same with review counted as found (what a person working the review
  queue would end up with, if they judged every queued pair right).
- `review_queue`: how many pairs land between the thresholds (absolute, and % of pairs).
- `by_type`: the same figures per entity type, with its thresholds.
- `misclassified`: every pair whose automatic decision is wrong (a different pair merged, or
  a same pair not merged), with its score, decision and reasons.

No Django and no database: it imports only `knowledge.consolidation.names`.
`evaluate(pairs)` is what a test calls.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The path is set up above (E402).
from knowledge.consolidation.names.normalise import suffixes_for_type  # noqa: E402
from knowledge.consolidation.names.similarity import name_similarity  # noqa: E402
from knowledge.consolidation.names.thresholds import thresholds_for  # noqa: E402

DEFAULT_PAIRS = ROOT / "tests" / "fixtures" / "entity_pairs.jsonl"
GOAL_PRECISION = 0.95
GOAL_RECALL = 0.85


def load_pairs(path: Path) -> list[dict[str, Any]]:
    """The labelled pairs of a JSON-lines file (blank lines are skipped)."""
    pairs = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            record = json.loads(line)
            missing = {"a", "b", "type", "same"} - record.keys()
            if missing:
                raise ValueError(f"{path}:{number}: missing {', '.join(sorted(missing))}")
            pairs.append(record)
    return pairs


def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def _figures(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    same = [r for r in rows if r["same"]]
    merged = [r for r in rows if r["decision"] == "merge"]
    found = [r for r in rows if r["decision"] != "separate"]
    queued = [r for r in rows if r["decision"] == "review"]
    merged_right = sum(1 for r in merged if r["same"])
    found_right = sum(1 for r in found if r["same"])
    return {
        "pairs": len(rows),
        "same": len(same),
        "auto_merge": {
            "precision": _ratio(merged_right, len(merged)),
            "recall": _ratio(merged_right, len(same)),
            "merged": len(merged),
            "false_merges": len(merged) - merged_right,
        },
        "with_review": {
            "precision": _ratio(found_right, len(found)),
            "recall": _ratio(found_right, len(same)),
        },
        "review_queue": {
            "pairs": len(queued),
            "percent": round(100 * len(queued) / len(rows), 1) if rows else 0.0,
            "same": sum(1 for r in queued if r["same"]),
            "different": sum(1 for r in queued if not r["same"]),
        },
    }


def evaluate(pairs: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Score every pair, decide with its type's thresholds, and summarise (see module doc)."""
    rows: list[dict[str, Any]] = []
    for pair in pairs:
        entity_type = str(pair["type"])
        thresholds = thresholds_for(entity_type)
        similarity = name_similarity(
            str(pair["a"]),
            str(pair["b"]),
            suffixes=suffixes_for_type(entity_type),
            entity_type=entity_type,
        )
        if similarity.score >= thresholds.auto_merge:
            decision = "merge"
        elif similarity.score >= thresholds.review:
            decision = "review"
        else:
            decision = "separate"
        rows.append(
            {
                "a": pair["a"],
                "b": pair["b"],
                "type": entity_type,
                "same": bool(pair["same"]),
                "score": similarity.score,
                "decision": decision,
                "reasons": list(similarity.reasons),
                "note": pair.get("note", ""),
            }
        )
    summary = _figures(rows)
    auto = summary["auto_merge"]
    summary["goals"] = {
        "auto_merge_precision": GOAL_PRECISION,
        "auto_merge_recall": GOAL_RECALL,
        "met": (auto["precision"] or 0.0) >= GOAL_PRECISION
        and (auto["recall"] or 0.0) >= GOAL_RECALL,
    }
    by_type: dict[str, Any] = {}
    for entity_type in sorted({r["type"] for r in rows}):
        thresholds = thresholds_for(entity_type)
        figures = _figures([r for r in rows if r["type"] == entity_type])
        figures["thresholds"] = {
            "auto_merge": thresholds.auto_merge,
            "review": thresholds.review,
        }
        by_type[entity_type] = figures
    summary["by_type"] = by_type
    summary["misclassified"] = [r for r in rows if (r["decision"] == "merge") != r["same"]]
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS)
    args = parser.parse_args(argv)
    print(json.dumps(evaluate(load_pairs(args.pairs)), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
