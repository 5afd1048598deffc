"""What the sources screens show of a source, on the list (sources_views) and on its own
page (source_detail_views): its progress as one bar, what the slice in flight is doing,
which extractor worked on it, and how often a page polls while it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ObjectDoesNotExist
from django.http import HttpRequest

from ingest.crawler.durations import format_duration
from ingest.models import Source, SourceStatus
from knowledge.models import SourceExtraction

POLL_SECONDS = 2


@dataclass(frozen=True, slots=True)
class Progress:
    """A source's progress as one bar: crawl pages settled plus documents processed, over
    pages discovered plus documents created. `total` 0 while work is under way draws an
    indeterminate bar (nothing counted yet)."""

    done: int
    total: int
    label: str


def source_progress(source: Source) -> Progress:
    progress = source.progress
    done, total = progress.done, progress.total
    if source.status == SourceStatus.DONE:
        done = total = max(total, 1)
    if source.is_finished:
        total = max(total, 1)  # a finished source never shows the "still working" bar
        failed = progress.failed
        label = counted(progress.documents, "document") + (f", {failed} failed" if failed else "")
    else:
        label = f"{progress.documents_settled} of {counted(progress.documents, 'document')}"
        if source.is_crawl:
            label = f"{progress.pages_settled} of {counted(progress.pages, 'page')}, {label}"
        if activity := activity_label(source):
            label = f"{label} · {activity}"
    return Progress(done, total, label)


_STAGE_WORDS = {
    "parsing": "Parsing",
    "chunking": "Chunking",
    "embedding": "Embedding",
    "extracting": "Extracting",
}


def activity_label(source: Source) -> str:
    """What the slice in flight is doing inside a document, in words ("Embedding 120 of
    480 chunks of Guide.pdf"), or "" when nothing is reported (ingest/actions/activity.py)."""
    activity = source.activity or {}
    stage = _STAGE_WORDS.get(str(activity.get("stage", "")))
    if not stage or not source.is_active:
        return ""
    text = stage
    if activity.get("total"):
        done, total = int(activity.get("done", 0)), int(activity["total"])
        text += f" {done:,} of {total:,} {activity.get('unit', '')}"
    if activity.get("document"):
        text += f"{' of' if activity.get('total') else ''} {activity['document']}"
    return text.strip()


def counted(number: int, noun: str) -> str:
    """`number` and `noun`, plural unless one: "1 document", "3 documents"."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def extractor_label(source: Source) -> str:
    """Which extractor worked on the source, said plainly: the offline one must never pass
    for the LLM."""
    try:
        account: SourceExtraction = source.extraction
    except ObjectDoesNotExist:
        return ""
    return extractor_text(account.extractor, account.model)


def extractor_text(extractor: str, model: str) -> str:
    """The extractor as `extractor_label` says it, from an extraction account's fields."""
    if extractor == "offline":
        return "Offline extractor"
    if extractor == "llm":
        return f"LLM ({model})" if model else "LLM"
    return ""


def page_number(request: HttpRequest, name: str) -> str:
    """The page of a paged list the query's `name` asks for; "1" unless it is a number."""
    value = request.GET.get(name, "1")
    return value if value.isdigit() else "1"


@dataclass(frozen=True, slots=True)
class LastRun:
    """A crawl's last finished round as the page shows it (`Source.last_run`)."""

    round: int
    scheduled: bool
    status: str
    started_at: datetime | None
    finished_at: datetime | None
    added: int
    changed: int
    unchanged: int
    missing: int
    removed: int


@dataclass(frozen=True, slots=True)
class Schedule:
    """A crawl's runs: its refresh interval ("1d", "" for none), the next scheduled run and
    the last finished one (None before the first ends)."""

    every: str
    next_run_at: datetime | None
    last_run: LastRun | None


_CHANGES = ("added", "changed", "unchanged", "missing", "removed")


def _moment(value: object) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


def crawl_schedule(source: Source) -> Schedule:
    last = source.last_run or {}
    last_run = None
    if last:
        last_run = LastRun(
            round=int(last.get("round", 1)),
            scheduled=bool(last.get("scheduled")),
            status=str(last.get("status", "")),
            started_at=_moment(last.get("started_at")),
            finished_at=_moment(last.get("finished_at")),
            **{k: int(last.get(k, 0)) for k in _CHANGES},
        )
    return Schedule(
        every=format_duration(source.refresh_every) if source.refresh_every else "",
        next_run_at=source.next_run_at if source.refresh_every else None,
        last_run=last_run,
    )
