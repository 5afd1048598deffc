"""The public crawl actions: create a crawl (checked, with its seed page queued), start it or
a new round of it, re-run any source. Running the loop is `loop.do_run_crawl`'s."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any, Unpack

from django.db import transaction
from django.utils import timezone

from ingest.actions.crawl.pages import add_pages
from ingest.actions.crawl.request import (
    MODES,
    CrawlRequest,
    CrawlSettings,
    check_crawl_role,
    validate_crawl_settings,
    validate_refresh_every,
)
from ingest.actions.sources import do_create_source, do_reingest_source, validate_source_options
from ingest.dispatch import enqueue_crawl
from ingest.models import CrawlPage, CrawlPageStatus, Source, SourceStatus
from workspaces.errors import Conflict, InvalidInput
from workspaces.models import Workspace


@transaction.atomic
def do_create_crawl_source(
    *,
    workspace: Workspace,
    crawl: CrawlSettings,
    name: str = "",
    tags: Iterable[str] = (),
    created_by: Any = None,
    options: dict[str, object] | None = None,
    refresh_every: int = 0,
) -> Source:
    """A crawl source with its seed page queued; the crawl task is enqueued on commit.
    `refresh_every` (seconds, 0: none, checked by `validate_refresh_every`) schedules
    re-crawls; the first is due that long after the first crawl ends."""
    source = do_create_source(
        workspace=workspace,
        kind=MODES[crawl.mode],
        name=name or crawl.url,
        origin=crawl.url,
        tags=tags,
        settings={**crawl.as_json(), **(options or {})},
        created_by=created_by,
    )
    if refresh_every:
        source.refresh_every = refresh_every
        source.next_run_at = timezone.now() + timedelta(seconds=refresh_every)
        source.save(update_fields=["refresh_every", "next_run_at"])
    add_pages(source, [(crawl.url, 0, "seed", None)])
    return source


def do_start_crawl(
    *, source: Source, enqueue: bool = True, role: str | None = None, scheduled: bool = False
) -> Source:
    """Run (or re-run) a crawl. A finished crawl starts a new round: every page is queued
    again with its validators, so unchanged pages answer 304 and cost nothing, and what the
    round does to each page is counted afresh (`CrawlPage.run_change`). `role`: the
    caller's role in the workspace, for the crawl limits only admins may pass
    (`check_crawl_role`; None: the operator's command line). `scheduled`: the round was
    started by the `recrawl` job (ingest/actions/crawl/schedule.py)."""
    with transaction.atomic():
        source = Source.objects.select_for_update().get(pk=source.pk)
        if not source.is_crawl:
            raise InvalidInput("This source is not a crawl.")
        check_crawl_role(CrawlSettings.from_source(source), role)
        if source.status == SourceStatus.DELETING:
            raise Conflict("This source is being deleted.")
        if source.is_finished:
            CrawlPage.objects.filter(source=source).exclude(via="redirect").update(
                status=CrawlPageStatus.QUEUED, attempts=0, not_before=None, reason=""
            )
            CrawlPage.objects.filter(source=source).exclude(run_change="").update(run_change="")
            source.settings = {**source.settings, "round": int(source.settings.get("round", 1)) + 1}
        source.settings = {**source.settings, "scheduled": scheduled}
        source.status = SourceStatus.RUNNING
        source.stage = "crawling"
        source.error = ""
        source.started_at = timezone.now()
        source.finished_at = None
        source.save(
            update_fields=["status", "stage", "error", "settings", "started_at", "finished_at"]
        )
        if enqueue:
            enqueue_crawl(source)
    return source


@transaction.atomic
def do_create_crawl(
    *,
    workspace: Workspace,
    name: str = "",
    tags: Iterable[str] = (),
    known_only: object = None,
    token_budget: object = None,
    topic: object = None,
    refresh_every: object = None,
    created_by: Any = None,
    role: str | None = None,
    start: bool = True,
    enqueue: bool = True,
    **request: Unpack[CrawlRequest],
) -> Source:
    """A crawl as the API, the sources screen, MCP and `manage.py crawl` ask for one: the
    request is checked (InvalidInput names the field at fault; PermissionDenied names the
    limit when `role`, the caller's role in the workspace, is below admin and the crawl
    asks for more than an editor may: `check_crawl_role`), the source created with its
    seed page and, with `start`, started; the crawl task is enqueued on commit unless
    `enqueue` is False (a caller that runs the crawl itself). `refresh_every` ("1d",
    seconds; None or 0: none) re-crawls it on a schedule."""
    crawl = validate_crawl_settings(**request)
    check_crawl_role(crawl, role)
    every = 0 if refresh_every is None else validate_refresh_every(refresh_every)
    source = do_create_crawl_source(
        workspace=workspace,
        crawl=crawl,
        name=name,
        tags=tags,
        created_by=created_by,
        options=validate_source_options(
            known_only=known_only, token_budget=token_budget, topic=topic
        ),
        refresh_every=every,
    )
    return do_start_crawl(source=source, enqueue=enqueue, role=role) if start else source


def do_rerun_source(*, source: Source, enqueue: bool = True, role: str | None = None) -> int:
    """Re-ingest any source: a crawl starts a new round (conditional requests; only
    admins may start one above the crawl limits, see `do_start_crawl`), other kinds
    re-process what changed. Returns the number of documents or pages queued."""
    if source.is_crawl:
        do_start_crawl(source=source, enqueue=enqueue, role=role)
        return CrawlPage.objects.filter(source=source, status=CrawlPageStatus.QUEUED).count()
    return do_reingest_source(source=source, enqueue=enqueue)
