"""The LLM's part in consolidation, run as the `consolidate` pipeline stage after extraction
(knowledge/stages.py) and after a source's re-extraction: doubtful pairs from the review
queue put to the LLM in batches ("same" merges automatically and reversibly, "different"
rejects, "unsure" waits for a person), and entity descriptions grown too long summarised.
Both run outside the extraction's write transactions and do nothing without an LLM, nor
with EXTRACTION_OFFLINE on: they are the pipeline's LLM work (`extraction_uses_llm`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from ingest.models import Document, Source
from knowledge.actions.curation.block import do_mark_not_same
from knowledge.actions.curation.merge import do_merge_entities
from knowledge.actions.evidence import FRAGMENT_ORDER, distinct_fragments, fragments_hash
from knowledge.actions.llm_calls import do_record_llm_call
from knowledge.consolidation.decide import Rule
from knowledge.models import (
    Entity,
    EntityState,
    Mention,
    MergeSuggestion,
    SourceExtraction,
    SuggestionStatus,
)
from knowledge.prompts import load_prompts, render
from system.llm.availability import extraction_uses_llm
from system.llm.client import ChatReply, LlmClient, LlmError
from workspaces.models import Workspace

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
    if batch <= 0 or not extraction_uses_llm():
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
    with transaction.atomic():
        MergeSuggestion.objects.filter(pk=suggestion.pk).update(
            llm_verdict=verdict, llm_reason=reason
        )
        pair = [suggestion.entity_a, suggestion.entity_b]
        if verdict == "same" and all(e.state == EntityState.ACTIVE for e in pair):
            do_merge_entities(
                workspace=workspace, merged_ids=[e.pk for e in pair], automatic=True,
                reasons=[*suggestion.reasons, f"llm: same ({reason})"], rule=Rule.LLM_REVIEW,
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
    call = do_record_llm_call(
        workspace_id=workspace.pk, source=source, purpose="review", model=model,
        prompt_tokens=prompt, completion_tokens=completion,
        usage_estimated=reply.usage.estimated if reply else False,
        duration_ms=reply.duration_ms if reply else 0,
        attempts=reply.attempts if reply else 1, ok=reply is not None, error=error,
    )  # fmt: skip
    if source is not None:
        SourceExtraction.objects.filter(source=source).update(
            prompt_tokens=F("prompt_tokens") + prompt,
            completion_tokens=F("completion_tokens") + completion,
            calls=F("calls") + 1,
            cost=F("cost") + call.cost,
        )


def do_summarize_descriptions(
    *, workspace: Workspace, entity_ids: Iterable[int], source: Source | None = None
) -> int:
    """With an LLM, summarise the description of each entity whose distinct fragments
    exceed CONSOLIDATION_SUMMARY_FRAGMENTS and changed since its last summary (a cached
    summary is reused while the fragments stay the same). Returns how many were written;
    a failing LLM leaves the fragment description in place."""
    limit = settings.CONSOLIDATION_SUMMARY_FRAGMENTS
    if limit <= 0 or not extraction_uses_llm():
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
            .order_by(*FRAGMENT_ORDER)
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


def do_review_documents(*, documents: Iterable[Document]) -> None:
    """The `consolidate` stage for documents just extracted: with an LLM, the open pairs of
    the review queue go to it when these documents' entities are among them, and the
    descriptions of these documents' entities are summarised where they grew long."""
    if not extraction_uses_llm():
        return
    by_source: dict[int, list[int]] = {}
    for document in documents:
        by_source.setdefault(document.source_id, []).append(document.pk)
    for source in Source.objects.filter(pk__in=by_source).select_related("workspace"):
        entity_ids = set(
            Mention.objects.filter(chunk__document_id__in=by_source[source.pk]).values_list(
                "entity_id", flat=True
            )
        )
        if not entity_ids:
            continue
        asked = (
            MergeSuggestion.objects.for_workspace(source.workspace)
            .filter(status=SuggestionStatus.OPEN, llm_verdict="")
            .filter(Q(entity_a_id__in=entity_ids) | Q(entity_b_id__in=entity_ids))
        )
        if asked.exists():
            do_review_suggestions_with_llm(workspace=source.workspace, source=source)
        do_summarize_descriptions(workspace=source.workspace, entity_ids=entity_ids, source=source)
