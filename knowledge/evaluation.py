"""Extraction quality against a gold set: precision, recall and F1 for entities and
relations, overall and by type.

Gold records are JSON lines: {"text": ..., "entities": [{"name", "type"}], "relations":
[{"source", "target", "type"}]}. Matching rule (documented in docs/operations.md):

- an entity matches when its canonical name (knowledge/canonical.py: NFKC, casefold,
  whitespace, punctuation at the ends) and its type equal a gold entity's; each gold entity
  is matched at most once. "Entities (any type)" relaxes the type.
- a relation matches when canonical source, canonical target and type equal a gold
  relation's, in that direction; `related_to` is symmetric, so either direction matches.
  "Relations (any type)" relaxes the type (direction still counts, except for related_to).

The extractor is the configured one, called directly: nothing is written to the database.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowledge.canonical import canonical_name, type_name
from knowledge.extraction.extractors import Extractor
from knowledge.extraction.schema import SchemaSnapshot

SYMMETRIC = {"related_to"}


class GoldFileError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class GoldRecord:
    text: str
    entities: tuple[tuple[str, str], ...]  # (canonical name, type)
    relations: tuple[tuple[str, str, str], ...]  # (canonical source, canonical target, type)


def load_gold(path: Path) -> list[GoldRecord]:
    records = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise GoldFileError(f"Cannot read {path}: {exc.strerror or exc}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            records.append(
                GoldRecord(
                    text=str(raw["text"]),
                    entities=tuple(
                        (canonical_name(e["name"]), type_name(e["type"]))
                        for e in raw.get("entities", [])
                    ),
                    relations=tuple(
                        (
                            canonical_name(r["source"]),
                            canonical_name(r["target"]),
                            type_name(r["type"]),
                        )
                        for r in raw.get("relations", [])
                    ),
                )
            )
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise GoldFileError(
                f"{path}:{number}: expected a JSON object with text, entities "
                f"[{{name, type}}] and relations [{{source, target, type}}] ({exc})"
            ) from exc
    if not records:
        raise GoldFileError(f"{path} holds no records.")
    return records


@dataclass(slots=True)
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
        }


@dataclass(slots=True)
class EvalReport:
    records: int = 0
    extractor: str = ""
    model: str = ""
    entities: Score = field(default_factory=Score)
    entities_any_type: Score = field(default_factory=Score)
    relations: Score = field(default_factory=Score)
    relations_any_type: Score = field(default_factory=Score)
    entity_types: dict[str, Score] = field(default_factory=dict)
    relation_types: dict[str, Score] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "extractor": self.extractor,
            "model": self.model,
            "entities": self.entities.as_dict(),
            "entities_any_type": self.entities_any_type.as_dict(),
            "relations": self.relations.as_dict(),
            "relations_any_type": self.relations_any_type.as_dict(),
            "entity_types": {k: v.as_dict() for k, v in sorted(self.entity_types.items())},
            "relation_types": {k: v.as_dict() for k, v in sorted(self.relation_types.items())},
        }


def _match[K](
    gold: Iterable[K],
    predicted: Iterable[K],
    score: Score,
    by_type: dict[str, Score] | None,
    type_of: Any,
) -> None:
    remaining = Counter(gold)
    for item in predicted:
        bucket = by_type.setdefault(type_of(item), Score()) if by_type is not None else None
        if remaining[item] > 0:
            remaining[item] -= 1
            score.tp += 1
            if bucket:
                bucket.tp += 1
        else:
            score.fp += 1
            if bucket:
                bucket.fp += 1
    for item, left in remaining.items():
        if left > 0:
            score.fn += left
            if by_type is not None:
                by_type.setdefault(type_of(item), Score()).fn += left


def _relation_key(source: str, target: str, kind: str) -> tuple[str, str, str]:
    if kind in SYMMETRIC and target < source:
        source, target = target, source
    return source, target, kind


def evaluate(
    records: list[GoldRecord], *, extractor: Extractor, schema: SchemaSnapshot
) -> EvalReport:
    report = EvalReport(records=len(records), extractor=extractor.kind, model=extractor.model_id)
    for record in records:
        outcome = extractor.extract(record.text, schema=schema)
        if outcome.error is not None:
            raise outcome.error
        predicted_entities = list(
            dict.fromkeys(
                (canonical_name(e.name), type_name(e.type)) for e in outcome.result.entities
            )
        )
        _match(
            record.entities,
            predicted_entities,
            report.entities,
            report.entity_types,
            lambda e: e[1],
        )
        _match(
            {name for name, _ in record.entities},
            {name for name, _ in predicted_entities},
            report.entities_any_type,
            None,
            None,
        )
        gold_relations = [_relation_key(*r) for r in record.relations]
        predicted_relations = list(
            dict.fromkeys(
                _relation_key(canonical_name(r.source), canonical_name(r.target), type_name(r.type))
                for r in outcome.result.relations
            )
        )
        _match(
            gold_relations,
            predicted_relations,
            report.relations,
            report.relation_types,
            lambda r: r[2],
        )
        _match(
            {(s, t) for s, t, _ in gold_relations},
            {(s, t) for s, t, _ in predicted_relations},
            report.relations_any_type,
            None,
            None,
        )
    return report
