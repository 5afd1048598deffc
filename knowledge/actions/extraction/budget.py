"""A source's extraction account: its budget, the tokens reserved for windows in flight, and
what the calls cost. Reservations are made before a window is sent (the worst case) and
settled when it returns, so concurrent windows never spend past the budget.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ingest.models import Source
from knowledge.extraction.extractors import Extractor
from knowledge.models import (
    ExtractionStatus,
    SourceExtraction,
)


def source_budget(source: Source) -> int | None:
    """The source's `token_budget` setting, else EXTRACTION_SOURCE_TOKEN_BUDGET; None = no
    limit."""
    raw = (source.settings or {}).get("token_budget")
    try:
        value = int(raw) if raw is not None else settings.EXTRACTION_SOURCE_TOKEN_BUDGET
    except (TypeError, ValueError):
        value = settings.EXTRACTION_SOURCE_TOKEN_BUDGET
    return value if value > 0 else None


def known_only(source: Source) -> bool:
    return bool((source.settings or {}).get("known_only"))


def account_for(source: Source, extractor: Extractor) -> SourceExtraction:
    account, _ = SourceExtraction.objects.get_or_create(
        source=source, defaults={"workspace_id": source.workspace_id}
    )
    budget = source_budget(source)
    fields: dict[str, Any] = {
        "extractor": extractor.kind,
        "model": extractor.model_id,
        "token_budget": budget,
    }
    if account.status in {ExtractionStatus.PENDING, ExtractionStatus.DONE}:
        fields["status"] = ExtractionStatus.RUNNING
        fields["message"] = ""
    if account.started_at is None:
        fields["started_at"] = timezone.now()
    SourceExtraction.objects.filter(pk=account.pk).update(**fields)
    account.refresh_from_db()
    return account


def reserve_tokens(account_id: int, tokens: int, *, ttl: float) -> str | None:
    """Promise `tokens` of the budget to one window; None when they do not fit.

    Reservations live on the account row (locked while changed) so two workers extracting
    the same source cannot together pass the budget; each expires after `ttl` seconds so a
    killed worker's promises are released.
    """
    with transaction.atomic():
        account = SourceExtraction.objects.select_for_update().get(pk=account_id)
        now = time.time()
        live = {k: v for k, v in (account.reservations or {}).items() if v[1] > now}
        if account.token_budget is not None and (
            account.tokens_used + sum(v[0] for v in live.values()) + tokens > account.token_budget
        ):
            if live != account.reservations:
                account.reservations = live
                account.save(update_fields=["reservations", "updated_at"])
            return None
        key = uuid.uuid4().hex
        live[key] = [tokens, now + ttl]
        account.reservations = live
        account.save(update_fields=["reservations", "updated_at"])
        return key


def add_counts(account_id: int, counts: dict[str, int]) -> None:
    if not any(counts.values()):
        return
    with transaction.atomic():
        account = SourceExtraction.objects.select_for_update().get(pk=account_id)
        merged = dict(account.counts or {})
        for key, value in counts.items():
            if value:
                merged[key] = merged.get(key, 0) + value
        account.counts = merged
        account.save(update_fields=["counts", "updated_at"])
