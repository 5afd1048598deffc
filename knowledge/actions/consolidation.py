"""Consolidate the entities already in a workspace: after a change of thresholds, of the
name rules, or curation elsewhere, the same tiers that run during extraction are applied to
existing entities — idempotently, and never across a "not the same" pair.

Each entity's keys are recomputed first (an entity whose canonical key now equals another's
of the same type is merged into it, automatically and reversibly); then each entity is
compared with the candidates that share a blocking key: above the type's auto-merge
threshold the smaller one is merged into the larger (an automatic merge, logged and undone
like a manual one), in the review band a suggestion is queued (once per pair, ever).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from ingest.models import Source
from knowledge.actions.curation import default_survivor, do_merge_entities
from knowledge.actions.extraction import distinct_fragments, fragments_hash, llm_cost
from knowledge.consolidation import resolution
from knowledge.consolidation.keys import entity_blocking_keys, entity_key, thresholds
from knowledge.extraction.llm import ChatReply, LlmClient, LlmError
from knowledge.extraction.prompts import load_prompts, render
from knowledge.models import (
    Entity,
    EntityState,
    LlmCall,
    Mention,
    MergeSuggestion,
    SourceExtraction,
    SuggestionStatus,
)
from knowledge.selectors.curation import get_entities_to_consolidate
from system.selectors import llm_is_configured
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
    resolution.lock_names(workspace, [(key, entity.type_id)])
    if key != entity.canonical_name or keys != entity.blocking_keys:
        twin = (
            Entity.objects.for_workspace(workspace)
            .filter(state=EntityState.ACTIVE, type_id=entity.type_id, canonical_name=key)
            .exclude(pk=entity.pk)
            .first()
        )
        if twin is not None and not resolution.not_same(workspace, twin.pk, entity.pk):
            do_merge_entities(
                workspace=workspace, survivor_id=twin.pk, merged_ids=[entity.pk],
                automatic=True, reasons=["same canonical name"],
            )  # fmt: skip
            report.merged += 1
            return
        if twin is None:
            entity.canonical_name = key
        entity.blocking_keys = keys
        entity.save(update_fields=["canonical_name", "blocking_keys", "updated_at"])
        report.rekeyed += 1
    homonyms = (
        Entity.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE, canonical_name=entity.canonical_name)
        .exclude(type_id=entity.type_id)
        .select_related("type")
    )
    report.suggested += resolution.suggest_other_types(workspace, entity, homonyms, {})
    match = resolution.best_match(workspace, entity.name, entity.type, exclude=entity.pk)
    if match is None:
        return
    other, similarity = match
    limits = thresholds(kind)
    if similarity.score < limits.review or resolution.not_same(workspace, entity.pk, other.pk):
        return
    if similarity.score >= limits.auto_merge:
        survivor = default_survivor((entity, other))
        merged = other if survivor is entity else entity
        do_merge_entities(
            workspace=workspace, survivor_id=survivor.pk, merged_ids=[merged.pk],
            automatic=True, reasons=list(similarity.reasons),
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


# --- Asking the LLM about the review band ------------------------------------------------

_VERDICT = re.compile(
    r"^\W*(\d+)\s*[:.)\]-]\s*\**\s*(same|different|unsure)\b\**\s*[-\u2013\u2014:,]*\s*(.*)$",
    re.IGNORECASE,
)


def parse_verdicts(text: str, *, count: int) -> dict[int, tuple[str, str]]:
    """{pair number: (verdict, reason)} from a reply; lines that do not parse are ignored
    (their pairs stay for a person), never an error."""
    verdicts: dict[int, tuple[str, str]] = {}
    for line in (text or "").splitlines():
        found = _VERDICT.match(line.strip())
        if found and 1 <= int(found.group(1)) <= count:
            verdicts.setdefault(
                int(found.group(1)), (found.group(2).lower(), found.group(3).strip()[:500])
            )
    return verdicts


def _describe(entity: Entity) -> str:
    text = " ".join(entity.description.split())[:300]
    return f"{entity.name!r} [{entity.type.name}]" + (f" ({text})" if text else "")


@dataclass(slots=True)
class LlmReviewReport:
    asked: int = 0
    same: int = 0
    different: int = 0
    unsure: int = 0
    error: str = ""


def do_review_suggestions_with_llm(
    *, workspace: Workspace, source: Source | None = None, limit: int | None = None
) -> LlmReviewReport:
    """Put open suggestions the LLM has not judged to it, CONSOLIDATION_LLM_BATCH pairs per
    request: "same" → automatic merge (reversible), "different" → rejected (not the same),
    "unsure" → left for a person. Each answer is recorded on its suggestion; each request's
    tokens on the source's account (or the workspace's, without a source)."""
    report = LlmReviewReport()
    batch = settings.CONSOLIDATION_LLM_BATCH
    if batch <= 0 or not llm_is_configured():
        return report
    pending = list(
        MergeSuggestion.objects.for_workspace(workspace)
        .filter(status=SuggestionStatus.OPEN, llm_verdict="")
        .select_related("entity_a__type", "entity_b__type")
        .order_by("-score", "pk")[: limit or settings.CONSOLIDATION_LLM_MAX_PAIRS]
    )
    if not pending:
        return report
    client = LlmClient.from_settings()
    prompts = load_prompts(settings.EXTRACTION_PROMPT_VERSION)
    try:
        for start in range(0, len(pending), batch):
            group = pending[start : start + batch]
            lines = "\n".join(
                f"{n}. {_describe(s.entity_a)} / {_describe(s.entity_b)}"
                for n, s in enumerate(group, 1)
            )
            messages = [
                {"role": "system", "content": prompts.system},
                {"role": "user", "content": render(prompts.same_entity, pairs=lines)},
            ]
            try:
                reply = client.chat(messages)
            except LlmError as exc:
                report.error = str(exc)
                _record_call(workspace, source, client.model, None, error=str(exc))
                break
            _record_call(workspace, source, client.model, reply)
            verdicts = parse_verdicts(reply.content, count=len(group))
            for number, suggestion in enumerate(group, 1):
                verdict, reason = verdicts.get(number, ("unsure", "no answer for this pair"))
                report.asked += 1
                _apply_verdict(workspace, suggestion, verdict, reason, report)
    finally:
        client.close()
    return report


def _apply_verdict(
    workspace: Workspace,
    suggestion: MergeSuggestion,
    verdict: str,
    reason: str,
    report: LlmReviewReport,
) -> None:
    from knowledge.actions.curation import do_mark_not_same

    with transaction.atomic():
        MergeSuggestion.objects.filter(pk=suggestion.pk).update(
            llm_verdict=verdict, llm_reason=reason
        )
        pair = [suggestion.entity_a, suggestion.entity_b]
        if verdict == "same" and all(e.state == EntityState.ACTIVE for e in pair):
            survivor = default_survivor(pair)
            merged = pair[1] if survivor is pair[0] else pair[0]
            do_merge_entities(
                workspace=workspace, survivor_id=survivor.pk, merged_ids=[merged.pk],
                automatic=True, reasons=[*suggestion.reasons, f"llm: same ({reason})"],
            )  # fmt: skip
            MergeSuggestion.objects.filter(pk=suggestion.pk).update(
                status=SuggestionStatus.ACCEPTED, decided_at=timezone.now()
            )
            report.same += 1
        elif verdict == "different":
            do_mark_not_same(
                workspace=workspace, entity_id=suggestion.entity_a_id,
                other_id=suggestion.entity_b_id,
            )  # fmt: skip
            report.different += 1
        else:
            report.unsure += 1


def _record_call(
    workspace: Workspace,
    source: Source | None,
    model: str,
    reply: ChatReply | None,
    *,
    error: str = "",
) -> None:
    prompt = reply.usage.prompt_tokens if reply else 0
    completion = reply.usage.completion_tokens if reply else 0
    cost = llm_cost(prompt, completion)
    LlmCall.objects.create(
        workspace=workspace, source=source, purpose="review", model=model,
        prompt_tokens=prompt, completion_tokens=completion,
        usage_estimated=reply.usage.estimated if reply else False, cost=cost,
        duration_ms=reply.duration_ms if reply else 0,
        attempts=reply.attempts if reply else 1, ok=reply is not None, error=error[:2000],
    )  # fmt: skip
    if source is not None:
        SourceExtraction.objects.filter(source=source).update(
            prompt_tokens=F("prompt_tokens") + prompt,
            completion_tokens=F("completion_tokens") + completion,
            calls=F("calls") + 1,
            cost=F("cost") + cost,
        )


def do_summarize_descriptions(
    *, workspace: Workspace, entity_ids: Iterable[int], source: Source | None = None
) -> int:
    """With an LLM, summarise the description of each entity whose distinct fragments
    exceed CONSOLIDATION_SUMMARY_FRAGMENTS and changed since its last summary (a cached
    summary is reused while the fragments stay the same). Returns how many were written;
    a failing LLM leaves the fragment description in place."""
    limit = settings.CONSOLIDATION_SUMMARY_FRAGMENTS
    if limit <= 0 or not llm_is_configured():
        return 0
    candidates = list(
        Entity.objects.for_workspace(workspace)
        .filter(pk__in=set(entity_ids), state=EntityState.ACTIVE)
        .select_related("type")
    )
    pending = []
    for entity in candidates:
        fragments = distinct_fragments(
            Mention.objects.filter(entity=entity)
            .exclude(description="")
            .order_by("pk")
            # The same first 50 rows the derived description is made from (same hash).
            .values_list("description", flat=True)[:50]
        )
        if len(fragments) > limit and entity.summary_hash != fragments_hash(fragments):
            pending.append((entity, fragments))
    if not pending:
        return 0
    client = LlmClient.from_settings()
    prompts = load_prompts(settings.EXTRACTION_PROMPT_VERSION)
    written = 0
    try:
        for entity, fragments in pending[: settings.CONSOLIDATION_LLM_MAX_PAIRS]:
            messages = [
                {"role": "system", "content": prompts.system},
                {
                    "role": "user",
                    "content": render(
                        prompts.summarize,
                        name=entity.name,
                        type=entity.type.name,
                        fragments="\n".join(f"- {f[:400]}" for f in fragments[:30]),
                    ),
                },
            ]
            try:
                reply = client.chat(messages)
            except LlmError as exc:
                _record_call(workspace, source, client.model, None, error=str(exc))
                break
            _record_call(workspace, source, client.model, reply)
            summary = " ".join(reply.content.split())[:2000]
            if summary:
                Entity.objects.filter(pk=entity.pk).update(
                    summary=summary, summary_hash=fragments_hash(fragments), description=summary
                )
                written += 1
    finally:
        client.close()
    return written
