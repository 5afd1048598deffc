"""Extraction runs: the cached result of each window, and the thread pool that makes the
missing ones.

`ensure_runs` finds the cached `ExtractionRun` of every window (key: window hash, prompt
version, model, schema hash) and extracts only the missing ones: LLM windows run
LLM_CONCURRENCY at a time in threads (which never touch the database); this thread
reserves each window's worst-case tokens against the source's budget before sending it,
and stores each finished window's run and calls at once (its own transaction), so a
killed worker loses at most the windows in flight.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F

from ingest.models import Chunk, Document, Source
from ingest.selectors import source_is_stopped
from knowledge.actions.extraction.budget import account_for, add_counts, reserve_tokens
from knowledge.actions.extraction.monthly_budget import MonthlyBudget
from knowledge.actions.llm_calls import do_record_llm_call
from knowledge.extraction.entity_types import looks_technical
from knowledge.extraction.extractors import Extractor, WindowOutcome
from knowledge.extraction.schema import SchemaSnapshot
from knowledge.extraction.windows import (
    Window,
    WindowContext,
    build_windows,
    document_vocabulary,
    with_context,
)
from knowledge.models import (
    ExtractionRun,
    ExtractionStatus,
    SourceExtraction,
)
from knowledge.selectors.matching import names_a_known_entity
from system import slices
from system.llm.client import LlmError, LlmNotConfigured

logger = logging.getLogger(__name__)


Progress = Callable[[int], None]  # called with the number of windows just finished


MAX_CONTEXT_LINKS = 50


def document_windows(document: Document) -> list[Window]:
    """The document's extraction windows, each with its context (title, the headings it
    sits under, the links in it). Chunks detected as boilerplate are never extracted."""
    chunks = list(
        Chunk.objects.filter(document=document, boilerplate=False)
        .only(
            "pk", "ordinal", "char_start", "char_end", "token_count", "content_hash",
            "heading_path",
        )
        .order_by("ordinal")
    )  # fmt: skip
    windows = build_windows(
        document.text, chunks, target_tokens=max(1, settings.EXTRACTION_WINDOW_TOKENS)
    )
    headings = {chunk.pk: tuple(chunk.heading_path or ()) for chunk in chunks}
    links = _link_texts(document.metadata)
    technical = looks_technical(document.text)
    # What the document's code shows (synopsis slots, language keywords) holds in every
    # window, not only the one the synopsis fell in.
    placeholders, keywords = document_vocabulary(document.text)
    return [
        with_context(
            window,
            WindowContext(
                title=document.title,
                headings=headings.get(window.chunk_ids[0], ()),
                links=tuple(t for t in links if t in window.text)[:MAX_CONTEXT_LINKS],
                technical=technical,
                placeholders=placeholders,
                keywords=keywords,
            ),
        )
        for window in windows
    ]


def _link_texts(metadata: Any) -> list[str]:
    """The distinct anchor texts of the document's links to its own site (the parsers
    record them as metadata["links"]), longest first so a long one wins over its prefix."""
    raw = metadata.get("links") if isinstance(metadata, dict) else None
    texts = {
        str(link.get("text", "")).strip()[:200]
        for link in (raw if isinstance(raw, list) else [])
        if isinstance(link, dict)
    }
    return sorted((t for t in texts if t), key=lambda t: (-len(t), t))


def _record_window(
    *,
    account: SourceExtraction,
    source: Source,
    window: Window,
    outcome: WindowOutcome,
    extractor: Extractor,
    schema: SchemaSnapshot,
    reservation: str | None,
) -> ExtractionRun | None:
    """Store a finished window's calls (always) and its run (when it succeeded), release its
    reservation and add its usage to the source — one transaction."""
    with transaction.atomic():
        locked = SourceExtraction.objects.select_for_update().get(pk=account.pk)
        run = None
        if outcome.error is None:
            run, _ = ExtractionRun.objects.update_or_create(
                workspace_id=source.workspace_id,
                window_hash=window.hash,
                prompt_version=extractor.prompt_version,
                model=extractor.model_id,
                schema_hash=schema.hash,
                defaults={
                    "extractor": extractor.kind,
                    "source": source,
                    "raw_output": outcome.raw_output,
                    "result": _result_json(outcome),
                    "counts": outcome.result.counts,
                    "problems": outcome.result.problems[:20],
                    "passes": outcome.passes,
                    "prompt_tokens": outcome.prompt_tokens,
                    "completion_tokens": outcome.completion_tokens,
                    "duration_ms": outcome.duration_ms,
                },
            )
        cost = _store_calls(source, run, outcome, extractor)
        reservations = dict(locked.reservations or {})
        if reservation:
            reservations.pop(reservation, None)
        locked.reservations = reservations
        locked.prompt_tokens += outcome.prompt_tokens
        locked.completion_tokens += outcome.completion_tokens
        locked.calls += len(outcome.calls)
        locked.cost += cost
        if run is not None:
            locked.windows_extracted += 1
            locked.counts = _with_capped(locked.counts, outcome.result.counts)
        locked.save(
            update_fields=[
                "reservations", "prompt_tokens", "completion_tokens", "calls", "cost",
                "windows_extracted", "counts", "updated_at",
            ]
        )  # fmt: skip
    return run


# What the per-window caps cut (knowledge/extraction/validation.py), summed on the source's
# account as each new run is stored (a cached run was counted when it was made).
CAPPED_COUNTS = ("entities_capped", "relations_capped")


def _with_capped(
    account_counts: dict[str, int] | None, run_counts: dict[str, int]
) -> dict[str, int]:
    merged = dict(account_counts or {})
    for key in CAPPED_COUNTS:
        if run_counts.get(key):
            merged[key] = merged.get(key, 0) + int(run_counts[key])
    return merged


def _store_calls(
    source: Source, run: ExtractionRun | None, outcome: WindowOutcome, extractor: Extractor
) -> Decimal:
    """One `LlmCall` row per request the window made (failed ones too); their total cost."""
    calls = [
        do_record_llm_call(
            workspace_id=source.workspace_id,
            source=source,
            run=run,
            purpose=call.purpose,
            model=extractor.model_id,
            prompt_tokens=call.prompt_tokens,
            completion_tokens=call.completion_tokens,
            usage_estimated=call.usage_estimated,
            duration_ms=call.duration_ms,
            attempts=call.attempts,
            ok=call.ok,
            error=call.error,
        )
        for call in outcome.calls
    ]
    return sum((call.cost for call in calls), Decimal(0))


def _result_json(outcome: WindowOutcome) -> dict[str, list[dict[str, Any]]]:
    return {
        "entities": [
            {
                "name": e.name,
                "type": e.type,
                "description": e.description,
                "proposed_type": e.proposed_type,
                "spans": [list(span) for span in e.spans],
                "defines": e.defines,
            }
            for e in outcome.result.entities
        ],
        "relations": [
            {
                "source": r.source,
                "target": r.target,
                "type": r.type,
                "description": r.description,
                "keywords": list(r.keywords),
                "strength": r.strength,
                "proposed_type": r.proposed_type,
                "span": list(r.span) if r.span else None,
            }
            for r in outcome.result.relations
        ],
    }


@dataclass(slots=True)
class EnsuredRuns:
    runs: dict[str, ExtractionRun] = field(default_factory=dict)  # by window hash
    cached: int = 0
    extracted: int = 0
    skipped_for_budget: int = 0
    error: str = ""  # the first failure, for the source's account and reports
    # Window hash -> why it has no run: it failed after its retries, or was never sent
    # because extraction stopped (see `_RunMaker.stop_after`). Failures are local: only
    # the documents these windows belong to fail; a retry sends only these windows again.
    failed: dict[str, str] = field(default_factory=dict)
    # Windows not sent because the workspace's monthly LLM budget is spent, and why: their
    # documents wait (neither written nor failed) until it is raised or the month turns.
    paused: set[str] = field(default_factory=set)
    paused_reason: str = ""
    # Windows of a known-only source that name no known entity or alias: never sent (to
    # the LLM or the offline extractor), they give nothing and their documents go on.
    skipped_unknown: set[str] = field(default_factory=set)

    def settled(self, window_hash: str) -> bool:
        """The window has what it will get: a run, or nothing because it names nothing known."""
        return window_hash in self.runs or window_hash in self.skipped_unknown


def ensure_runs(
    *,
    source: Source,
    windows: list[Window],
    extractor: Extractor,
    schema: SchemaSnapshot,
    force: bool = False,
    progress: Progress | None = None,
    idle: Callable[[EnsuredRuns], None] | None = None,
    known_only: bool = False,
) -> EnsuredRuns:
    """The run of every window: from the cache, else extracted now. `idle` is called while
    requests are in flight, so the caller can write what is ready meanwhile. A window
    that fails is recorded in `failed` and the others go on, unless the failure says no
    window can succeed (see `_RunMaker.stop_after`). With `known_only`, a window to extract
    that names no known entity or alias is not sent at all (`skipped_unknown`, counted as
    `windows_skipped_unknown` on the source's account)."""
    account = account_for(source, extractor)
    unique: dict[str, Window] = {}
    for window in windows:
        unique.setdefault(window.hash, window)
    ensured = EnsuredRuns()
    if not force:
        ensured.runs = _cached_runs(source, list(unique), extractor, schema)
    ensured.cached = len(ensured.runs)
    if progress and ensured.cached:
        progress(ensured.cached)
    if ensured.cached:
        SourceExtraction.objects.filter(pk=account.pk).update(
            windows_cached=F("windows_cached") + ensured.cached
        )
    missing = [w for h, w in unique.items() if h not in ensured.runs]
    if known_only and missing:
        missing = _naming_known(account, source, missing, ensured, progress)
    if not missing:
        return ensured
    maker = _RunMaker(account, source, extractor, schema, ensured, progress)
    # LLM windows go through the thread pool even one at a time, so writing evidence (idle)
    # overlaps the wait; the offline extractor is CPU-bound and runs here, in turn.
    if extractor.kind == "llm":
        maker.run_threaded(missing, idle)
    else:
        maker.run_inline(missing)
    if maker.budget_hit and ensured.skipped_for_budget:
        _record_budget_stop(account, source, ensured.skipped_for_budget)
    if ensured.error:
        SourceExtraction.objects.filter(pk=account.pk).update(
            status=ExtractionStatus.FAILED, message=f"Extraction failed: {ensured.error}"[:2000]
        )
    return ensured


def _naming_known(
    account: SourceExtraction,
    source: Source,
    windows: list[Window],
    ensured: EnsuredRuns,
    progress: Progress | None,
) -> list[Window]:
    """The windows that name a known entity or alias; the others are set aside as
    `skipped_unknown` and counted on the account."""
    kept = []
    for window in windows:
        if names_a_known_entity(source.workspace_id, window.text):
            kept.append(window)
        else:
            ensured.skipped_unknown.add(window.hash)
    skipped = len(windows) - len(kept)
    if skipped:
        add_counts(account.pk, {"windows_skipped_unknown": skipped})
        if progress:
            progress(skipped)
    return kept


def _cached_runs(
    source: Source, hashes: list[str], extractor: Extractor, schema: SchemaSnapshot
) -> dict[str, ExtractionRun]:
    """The stored runs of these windows for this prompt version, model and schema."""
    return {
        run.window_hash: run
        for run in ExtractionRun.objects.filter(
            workspace_id=source.workspace_id,
            window_hash__in=hashes,
            prompt_version=extractor.prompt_version,
            model=extractor.model_id,
            schema_hash=schema.hash,
        )
    }


def _reservation_ttl() -> float:
    """How long a window's reservation may live: every attempt of every gleaning pass."""
    attempts = (settings.LLM_MAX_RETRIES + 1) * (settings.EXTRACTION_GLEANING_PASSES + 1)
    return (settings.LLM_TIMEOUT + settings.LLM_RETRY_MAX_DELAY) * attempts + 60


class _RunMaker:
    """Extracts the missing windows of one call to `ensure_runs`, inline or on a pool,
    reserving budget before each window and recording each one as it finishes."""

    def __init__(
        self,
        account: SourceExtraction,
        source: Source,
        extractor: Extractor,
        schema: SchemaSnapshot,
        ensured: EnsuredRuns,
        progress: Progress | None,
    ) -> None:
        self.account, self.source, self.extractor, self.schema = account, source, extractor, schema
        self.ensured, self.progress = ensured, progress
        self.ttl = _reservation_ttl()
        # Without a budget there is nothing to reserve (one transaction less per window).
        self.budgeted = account.token_budget is not None
        self.budget_hit = False
        # The workspace's monthly budget binds what costs money: the LLM's windows.
        self.monthly = MonthlyBudget.of(source.workspace) if extractor.kind == "llm" else None
        # Set when no further window should be sent (why); see `stop_after`.
        self.stopped = ""
        self.failures_in_a_row = 0

    def reserve(self, window: Window, remaining: int) -> tuple[bool, str | None]:
        """(may send, reservation): False once the workspace's monthly budget is spent
        (`ensured.paused_reason` says so) or the source's budget cannot cover the window."""
        if self.monthly is not None and self.monthly.spent_out():
            self.ensured.paused_reason = self.monthly.pause_message()
            return False, None
        if not self.budgeted:
            return True, None
        cost = self.extractor.max_tokens_for(window.text, schema=self.schema)
        if not cost:
            return True, None
        reservation = reserve_tokens(self.account.pk, cost, ttl=self.ttl)
        if reservation is None:
            self.budget_hit = True
            self.ensured.skipped_for_budget = remaining
            return False, None
        return True, reservation

    def finish(self, window: Window, outcome: WindowOutcome, reservation: str | None) -> None:
        run = _record_window(
            account=self.account,
            source=self.source,
            window=window,
            outcome=outcome,
            extractor=self.extractor,
            schema=self.schema,
            reservation=reservation,
        )
        if run is not None:
            self.ensured.runs[window.hash] = run
            self.ensured.extracted += 1
            self.failures_in_a_row = 0
        elif outcome.error is not None:
            self.ensured.failed[window.hash] = str(outcome.error)
            self.ensured.error = self.ensured.error or str(outcome.error)
            self.failures_in_a_row += 1
            self.stopped = self.stopped or self.stop_after(outcome.error)
        if self.progress:
            self.progress(1)

    # Failures in a row (no window succeeding in between) after which the LLM is taken to
    # be down rather than refusing particular windows: the rest are not sent.
    FAILURES_BEFORE_STOPPING = 3

    def stop_after(self, error: LlmError) -> str:
        """Why no further window should be sent after this failure ("" to go on). A window
        that fails on its own (a reply that cannot be parsed, a request the model refuses,
        a timeout on a long text) fails only its own document; a wrong key, model or
        address fails every window alike, and so do repeated failures in a row."""
        if (
            isinstance(error, LlmNotConfigured)
            or error.status in {401, 403, 404}
            or (error.status is not None and 300 <= error.status < 400)
        ):
            return f"extraction stopped: {error}"
        if self.failures_in_a_row >= self.FAILURES_BEFORE_STOPPING:
            return (
                f"extraction stopped after {self.failures_in_a_row} failed windows in a row "
                f"(the last: {error})"
            )
        return ""

    def pause(self, windows: list[Window]) -> None:
        """Windows left unsent because the monthly budget is spent: they wait."""
        if self.ensured.paused_reason:
            self.ensured.paused.update(w.hash for w in windows)

    def not_sent(self, windows: list[Window]) -> None:
        """Windows left unsent because extraction stopped: failed too, with the reason."""
        for window in windows:
            self.ensured.failed.setdefault(window.hash, f"Not sent, {self.stopped}")

    def run_inline(self, queue: list[Window]) -> None:
        for index, window in enumerate(queue):
            if self.stopped:
                self.not_sent(queue[index:])
                break
            if index:
                slices.checkpoint()  # each window's run is stored: a safe place to stop
            if index % 8 == 0 and source_is_stopped(self.source.pk):
                break
            may_send, reservation = self.reserve(window, len(queue) - index)
            if not may_send:
                self.pause(queue[index:])
                break
            self.finish(
                window,
                self.extractor.extract(window.text, schema=self.schema, context=window.context),
                reservation,
            )

    def run_threaded(self, queue: list[Window], idle: Callable[[EnsuredRuns], None] | None) -> None:
        """LLM_CONCURRENCY windows in flight; results recorded on this thread as they come,
        `idle` called between them, a cancelled source noticed within ~2 s.

        The end of a work slice (system/slices.py) sends nothing more and waits for the
        windows in flight (paid for); a cancel or a worker's stop does not wait for them:
        their threads are abandoned and their windows go to the next slice."""
        concurrency = max(1, settings.LLM_CONCURRENCY)
        in_flight: dict[Future[WindowOutcome], tuple[Window, str | None]] = {}
        position = 0
        ending: str | None = None
        pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="llm")

        def fill() -> None:
            nonlocal position
            while len(in_flight) < concurrency and position < len(queue) and not ending:
                if self.stopped or self.budget_hit or self.ensured.paused_reason:
                    return
                window = queue[position]
                may_send, reservation = self.reserve(window, len(queue) - position)
                if not may_send:
                    self.pause(queue[position:])
                    return
                position += 1
                future = pool.submit(self.extractor.extract, window.text, schema=self.schema)
                in_flight[future] = (window, reservation)

        try:
            fill()
            checked = time.monotonic()
            while in_flight:
                done, _ = wait(list(in_flight), timeout=1.0, return_when=FIRST_COMPLETED)
                for future in done:
                    window, reservation = in_flight.pop(future)
                    self.finish(window, future.result(), reservation)
                ending = ending or slices.stop_reason()
                if ending in {slices.CANCELLED, slices.SHUTDOWN}:
                    raise slices.SliceInterrupted(ending)
                if time.monotonic() - checked > 2:
                    checked = time.monotonic()
                    if source_is_stopped(self.source.pk):
                        position = len(queue)
                fill()
                if idle and in_flight:
                    idle(self.ensured)
        finally:
            pool.shutdown(wait=ending is None, cancel_futures=True)
        if ending is not None and position < len(queue):
            raise slices.SliceInterrupted(ending)
        if self.stopped:
            self.not_sent(queue[position:])


def _record_budget_stop(account: SourceExtraction, source: Source, skipped: int) -> None:
    """The budget ran out: say so on the account and the source, with how to continue."""
    account.refresh_from_db()
    message = (
        f"Stopped: the token budget of {account.token_budget:,} tokens was reached "
        f"({account.tokens_used:,} used); {skipped} window(s) were "
        "not extracted. Raise the source's token_budget (or "
        "EXTRACTION_SOURCE_TOKEN_BUDGET) and run `manage.py extract --workspace "
        f"{source.workspace.slug} --source {source.pk}` to continue."
    )
    SourceExtraction.objects.filter(pk=account.pk).update(
        status=ExtractionStatus.BUDGET_EXCEEDED,
        message=message,
        windows_skipped=F("windows_skipped") + skipped,
    )
    Source.objects.filter(pk=source.pk).update(warning=message[:2000])
