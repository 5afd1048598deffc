"""Reads of extraction's accounts: a source's runs, status, token usage and summary, and the
documents an extraction would take.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q, Sum

from ingest.models import Document, DocumentStatus, Source
from knowledge.models import (
    ExtractionRun,
    ExtractionStatus,
    LlmCall,
    Mention,
    RelationEvidence,
    SourceExtraction,
)
from workspaces.models import Workspace


def get_source_extraction(workspace: Workspace, source: Source) -> SourceExtraction | None:
    return SourceExtraction.objects.for_workspace(workspace).filter(source=source).first()


def get_source_runs(workspace: Workspace, source: Source) -> list[ExtractionRun]:
    """The runs whose evidence this source's documents carry (cached ones included)."""
    run_ids = set(
        Mention.objects.for_workspace(workspace)
        .filter(chunk__document__source=source)
        .values_list("run_id", flat=True)
        .distinct()
    ) | set(
        RelationEvidence.objects.for_workspace(workspace)
        .filter(chunk__document__source=source)
        .values_list("run_id", flat=True)
        .distinct()
    )
    return list(
        ExtractionRun.objects.for_workspace(workspace).filter(pk__in=run_ids).order_by("created_at")
    )


def get_workspace_token_usage(workspace: Workspace) -> dict[str, object]:
    totals = LlmCall.objects.for_workspace(workspace).aggregate(
        calls=Count("pk"),
        prompt_tokens=Sum("prompt_tokens"),
        completion_tokens=Sum("completion_tokens"),
        cost=Sum("cost"),
    )
    return {
        "calls": totals["calls"] or 0,
        "prompt_tokens": totals["prompt_tokens"] or 0,
        "completion_tokens": totals["completion_tokens"] or 0,
        "cost": float(totals["cost"] or 0),
    }


def extraction_status(account: SourceExtraction | None, source: Source) -> str:
    """What to show for a source's extraction: a finished source whose extraction did not
    stop early is done."""
    if account is None:
        return ExtractionStatus.PENDING
    if account.status == ExtractionStatus.RUNNING and source.is_finished:
        return ExtractionStatus.DONE
    return str(account.status)


def documents_for_extraction(
    *, workspace: Workspace, source: Source | None = None
) -> list[Document]:
    """Documents whose text is ready for extraction (extracted or done, not failed)."""
    queryset = Document.objects.for_workspace(workspace).filter(
        status__in=[DocumentStatus.DONE, DocumentStatus.EXTRACTED]
    )
    if source is not None:
        queryset = queryset.filter(source=source)
    return list(queryset.select_related("workspace").order_by("source_id", "pk"))


def get_extraction_summary(workspace: Workspace, source: Source) -> dict[str, Any]:
    """Everything the API and UI show about a source's extraction, in one dict."""
    account = get_source_extraction(workspace, source)
    runs = ExtractionRun.objects.for_workspace(workspace).filter(
        Q(source=source)
        | Q(pk__in=Mention.objects.filter(chunk__document__source=source).values("run_id"))
        | Q(pk__in=RelationEvidence.objects.filter(chunk__document__source=source).values("run_id"))
    )
    mentions = Mention.objects.for_workspace(workspace).filter(chunk__document__source=source)
    evidence = RelationEvidence.objects.for_workspace(workspace).filter(
        chunk__document__source=source
    )
    settings_ = source.settings or {}
    extractor = account.extractor if account else ""
    return {
        "source_id": source.pk,
        "extractor": extractor,
        "offline": extractor == "offline",
        "model": account.model if account else "",
        "status": extraction_status(account, source),
        "message": account.message if account else "",
        "known_only": bool(settings_.get("known_only")),
        "token_budget": account.token_budget if account else settings_.get("token_budget"),
        "tokens": {
            "prompt": account.prompt_tokens if account else 0,
            "completion": account.completion_tokens if account else 0,
            "total": account.tokens_used if account else 0,
        },
        "calls": account.calls if account else 0,
        "cost": float(account.cost) if account else 0.0,
        "windows": {
            "extracted": account.windows_extracted if account else 0,
            "cached": account.windows_cached if account else 0,
            "skipped": account.windows_skipped if account else 0,
            "skipped_unknown": int(
                ((account.counts or {}) if account else {}).get("windows_skipped_unknown", 0)
            ),
        },
        "counts": (account.counts if account else {}) or {},
        "entities": mentions.values("entity_id").distinct().count(),
        "relations": evidence.values("relation_id").distinct().count(),
        "mentions": mentions.count(),
        "runs": list(runs.distinct().order_by("-created_at")[:200]),
        "runs_total": runs.distinct().count(),
        "started_at": account.started_at if account else None,
        "updated_at": account.updated_at if account else None,
    }
