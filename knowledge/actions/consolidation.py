"""Consolidate the entities already in a workspace: after a change of thresholds, of the
name rules, or curation elsewhere, the same tiers that run during extraction are applied to
existing entities — idempotently, and never across a "not the same" pair.

Each entity's keys are recomputed first (an entity whose canonical key now equals another's
of the same type is merged into it, automatically and reversibly); an entity of the fallback
type and one of another type with its name, spelled alike, are merged the same way (see
`untyped_twin`: graphs built before that rule hold such pairs); then each entity is
compared with the candidates that share a blocking key: above the type's auto-merge
threshold the smaller one is merged into the larger (an automatic merge, logged and undone
like a manual one), in the review band a suggestion is queued (once per pair, ever).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction

from ingest.models import Source
from knowledge.actions.curation.merge import do_merge_entities
from knowledge.actions.resolution import lock_names, suggest_other_types
from knowledge.actions.review import do_review_suggestions_with_llm
from knowledge.consolidation.decide import Outcome, Rule, outcome
from knowledge.consolidation.keys import entity_blocking_keys, entity_key, thresholds
from knowledge.consolidation.matching import UNTYPED_REASON, untyped_twin
from knowledge.extraction.entity_types import FALLBACK_TYPE
from knowledge.models import (
    Entity,
    EntityState,
    MergeSuggestion,
)
from knowledge.selectors.curation import get_entities_to_consolidate
from knowledge.selectors.matching import best_match, kept_apart, not_same
from workspaces.models import Workspace


@dataclass(slots=True)
class ConsolidationReport:
    entities: int = 0
    rekeyed: int = 0
    merged: int = 0
    suggested: int = 0
    llm_same: int = 0
    llm_different: int = 0


def do_consolidate(
    *,
    workspace: Workspace,
    source: Source | None = None,
    progress: Callable[[int], None] | None = None,
) -> ConsolidationReport:
    report = ConsolidationReport()
    entities = get_entities_to_consolidate(workspace, source=source)
    ids = list(entities.order_by("mention_count", "pk").values_list("pk", flat=True))
    report.entities = len(ids)
    for entity_id in ids:
        with transaction.atomic():
            _consolidate_one(workspace, entity_id, report)
        if progress:
            progress(1)
    reviewed = do_review_suggestions_with_llm(workspace=workspace, source=source)
    report.llm_same, report.llm_different = reviewed.same, reviewed.different
    return report


def _consolidate_one(workspace: Workspace, entity_id: int, report: ConsolidationReport) -> None:
    entity = (
        Entity.objects.select_for_update()
        .select_related("type")
        .filter(pk=entity_id, state=EntityState.ACTIVE)
        .first()
    )
    if entity is None:
        return  # merged away earlier in this run
    kind = entity.type.name
    key = entity_key(entity.name, kind)
    keys = entity_blocking_keys(entity.name, kind)
    lock_names(workspace, [(key, entity.type_id)])
    if key != entity.canonical_name or keys != entity.blocking_keys:
        twin = (
            Entity.objects.for_workspace(workspace)
            .filter(state=EntityState.ACTIVE, type_id=entity.type_id, canonical_name=key)
            .exclude(pk=entity.pk)
            .first()
        )
        if twin is not None and not not_same(workspace, twin.pk, entity.pk):
            do_merge_entities(
                workspace=workspace, survivor_id=twin.pk, merged_ids=[entity.pk],
                automatic=True, reasons=["same canonical name"], rule=Rule.SAME_KEY,
            )  # fmt: skip
            report.merged += 1
            return
        if twin is None:
            entity.canonical_name = key
        entity.blocking_keys = keys
        entity.save(update_fields=["canonical_name", "blocking_keys", "updated_at"])
        report.rekeyed += 1
    homonyms = list(
        Entity.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE, canonical_name=entity.canonical_name)
        .exclude(type_id=entity.type_id)
        .select_related("type")
    )
    twin = untyped_twin(entity.name, kind, homonyms, fallback=FALLBACK_TYPE)
    if twin is not None and not not_same(workspace, entity.pk, twin.pk):
        do_merge_entities(
            workspace=workspace, merged_ids=[entity.pk, twin.pk], automatic=True,
            reasons=[UNTYPED_REASON], rule=Rule.UNTYPED_TWIN,
        )  # fmt: skip
        report.merged += 1
        return
    report.suggested += suggest_other_types(workspace, entity, homonyms, {})
    match = best_match(workspace, entity.name, entity.type, exclude=entity.pk)
    if match is None:
        return
    other, similarity, rule = match
    verdict = outcome(match, thresholds(kind))
    if verdict is Outcome.NONE or kept_apart(workspace, entity, other):
        return
    if verdict is Outcome.MERGE:
        do_merge_entities(
            workspace=workspace, merged_ids=[entity.pk, other.pk], automatic=True,
            reasons=list(similarity.reasons), rule=rule,
        )  # fmt: skip
        report.merged += 1
        return
    low, high = sorted((entity.pk, other.pk))
    _, created = MergeSuggestion.objects.get_or_create(
        workspace=workspace,
        entity_a_id=low,
        entity_b_id=high,
        defaults={"score": round(similarity.score, 4), "reasons": list(similarity.reasons)},
    )
    report.suggested += int(created)
