"""The short-forms benchmark itself; run it through bench/short_forms.py (see there)."""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from django.core.management import call_command

from bench.cleanup import drop_workspace
from ingest.models import Chunk, Document, DocumentStatus, Source, SourceKind, SourceStatus
from knowledge.actions.extraction.materialize import Materializer
from knowledge.actions.extraction.runs import EnsuredRuns, document_windows
from knowledge.actions.schema import do_ensure_default_schema
from knowledge.models import (
    Alias,
    AliasOrigin,
    Entity,
    ExtractionRun,
    Mention,
    MergeSuggestion,
    SuggestionStatus,
)
from workspaces.actions.workspaces import do_create_workspace
from workspaces.models import Workspace

DATA = Path(__file__).resolve().parent / "data" / "short_forms.jsonl"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_documents(workspace: Workspace, docs: list[dict[str, Any]]) -> dict[str, Document]:
    """Documents, chunks and one run per window holding the perfect extractor's output,
    then the materializer over all of them, in order."""
    source = Source.objects.create(
        workspace=workspace, kind=SourceKind.TEXT, name="short forms", status=SourceStatus.DONE
    )
    documents: dict[str, Document] = {}
    windows_by_doc = {}
    runs: dict[str, ExtractionRun] = {}
    for doc in docs:
        text = doc["text"]
        document = Document.objects.create(
            workspace=workspace, source=source, path=f"{doc['id']}.txt", title=doc["id"],
            text=text, status=DocumentStatus.EXTRACTED, content_hash=_sha(text),
        )  # fmt: skip
        Chunk.objects.create(
            workspace=workspace, document=document, ordinal=0, text=text, char_start=0,
            char_end=len(text), token_count=len(text.split()), content_hash=_sha(text),
        )  # fmt: skip
        document.workspace = workspace
        windows = document_windows(document)
        for window in windows:
            entities = []
            for entity in doc["entities"]:
                spans = [
                    [s - window.start, e - window.start]
                    for s, e in entity["spans"]
                    if window.start <= s and e <= window.end
                ]
                if spans:
                    entities.append(
                        {"name": entity["name"], "type": entity["type"], "description": "",
                         "proposed_type": False, "spans": spans}
                    )  # fmt: skip
            runs[window.hash] = ExtractionRun.objects.create(
                workspace=workspace, window_hash=window.hash, prompt_version="bench",
                model="perfect-extractor", schema_hash="bench", extractor="llm",
                source=source, result={"entities": entities, "relations": []},
            )  # fmt: skip
        documents[doc["id"]] = document
        windows_by_doc[document.pk] = windows
    writer = Materializer(
        documents=list(documents.values()),
        windows_by_doc=windows_by_doc,
        refresh_hashes=set(),
        only_known=False,
    )
    writer.write_ready(EnsuredRuns(runs=runs), final=True)
    return documents


def final_entity(entity_id: int, entities: dict[int, Entity]) -> int:
    seen = set()
    while entities[entity_id].merged_into_id and entity_id not in seen:
        seen.add(entity_id)
        entity_id = entities[entity_id].merged_into_id  # type: ignore[assignment]
    return entity_id


def _pairs(counts: Counter[Any]) -> int:
    return sum(n * (n - 1) // 2 for n in counts.values())


def pairwise(items: list[tuple[str, str, int]]) -> tuple[int, int, int]:
    """(true pairs, predicted pairs, gold pairs) of (document, gold, predicted) mentions."""
    gold = Counter((g) for _, g, _ in items)
    predicted = Counter((p) for _, _, p in items)
    both = Counter((g, p) for _, g, p in items)
    return _pairs(both), _pairs(predicted), _pairs(gold)


def ratio(a: int, b: int) -> float:
    return round(a / b, 4) if b else 1.0


def evaluate(
    workspace: Workspace, docs: list[dict[str, Any]], documents: dict[str, Document]
) -> dict[str, Any]:
    entities = {e.pk: e for e in Entity.objects.filter(workspace=workspace)}
    placed = {
        (m.chunk.document_id, m.char_start): m.entity_id
        for m in Mention.objects.filter(workspace=workspace).select_related("chunk")
    }
    items: list[tuple[str, str, int]] = []
    missing = 0
    for doc in docs:
        label = {name: g for g, names in doc["gold"].items() for name in names}
        document = documents[doc["id"]]
        for entity in doc["entities"]:
            for start, _ in entity["spans"]:
                found = placed.get((document.pk, start))
                if found is None:
                    missing += 1
                    continue
                items.append((doc["id"], label[entity["name"]], final_entity(found, entities)))
    true_pairs, predicted, gold = pairwise(items)
    within = [0, 0, 0]
    for doc in docs:
        t, p, g = pairwise([i for i in items if i[0] == doc["id"]])
        within = [within[0] + t, within[1] + p, within[2] + g]
    # Where it goes wrong: predicted entities holding more than one gold entity.
    holders: dict[int, set[str]] = {}
    for _, gold_label, entity_id in items:
        holders.setdefault(entity_id, set()).add(gold_label)
    mixed = sorted(
        f"{entities[entity_id].name}: {', '.join(sorted(golds))}"
        for entity_id, golds in holders.items()
        if len(golds) > 1
    )
    return {
        "documents": len(docs),
        "mentions": len(items),
        "mentions_missing": missing,
        "gold_entities": len({g for _, g, _ in items}),
        "predicted_entities": len({p for _, _, p in items}),
        "precision": ratio(true_pairs, predicted),
        "recall": ratio(true_pairs, gold),
        "pairs": {"true": true_pairs, "predicted": predicted, "gold": gold},
        "within_document": {
            "precision": ratio(within[0], within[1]),
            "recall": ratio(within[0], within[2]),
            "pairs": {"true": within[0], "predicted": within[1], "gold": within[2]},
        },
        "mixed_entities": mixed,
        "review_queue": MergeSuggestion.objects.filter(
            workspace=workspace, status=SuggestionStatus.OPEN
        ).count(),
        "auto_aliases": sorted(
            f"{a.name} -> {a.entity.name}"
            for a in Alias.objects.filter(
                workspace=workspace, origin=AliasOrigin.AUTO
            ).select_related("entity")
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Short-forms benchmark; see bench/short_forms.py.")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--keep", action="store_true", help="keep the workspace afterwards")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    docs = load(args.data)
    workspace = do_create_workspace(slug=f"bench-short-forms-{time.time_ns()}")
    do_ensure_default_schema(workspace=workspace)
    try:
        started = time.perf_counter()
        documents = write_documents(workspace, docs)
        seconds = time.perf_counter() - started
        report = evaluate(workspace, docs, documents)
        report["write_seconds"] = round(seconds, 2)
        report["workspace"] = workspace.slug
        print(json.dumps(report, indent=2, ensure_ascii=False))
    finally:
        if not args.keep:
            drop_workspace(workspace)
