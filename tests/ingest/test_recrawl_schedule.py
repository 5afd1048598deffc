"""Scheduled re-crawls: the refresh interval (durations, the floor) from the API and
`manage.py crawl --every`; the `recrawl` upkeep job queueing each due source once, with two
workers asking at once; a round's record of what it changed; sitemap pages no longer listed
kept for the grace period, then retired. The whole pipeline's side (no work for unchanged
pages, evidence retired, curation kept): tests/knowledge/test_recrawl.py."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from ingest.actions.crawl import (
    QueuedRecrawls,
    do_create_crawl,
    do_queue_due_recrawls,
    do_run_crawl,
    do_start_crawl,
    validate_refresh_every,
)
from ingest.actions.pipeline import do_process_documents
from ingest.actions.sources import do_create_text_source
from ingest.crawler.durations import DurationError, format_duration, parse_duration
from ingest.dispatch import CRAWL_TASK
from ingest.models import CrawlPage, Document, Source
from system.actions.upkeep import do_queue_due_jobs, do_run_upkeep_job
from system.models import ScheduledJob
from tests.ingest.crawl_site import XML, CrawlSite, Page, html_page
from workspaces.errors import InvalidInput
from workspaces.models import Role

DAY = 24 * 3600


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30m", 1800),
        ("6h", 6 * 3600),
        ("1d", DAY),
        ("2w", 14 * DAY),
        (" 1D ", DAY),
        ("7200", 7200),
        (7200, 7200),
        ("off", 0),
        ("0", 0),
        (0, 0),
    ],
)
def test_durations_are_read_in_minutes_hours_days_weeks_or_seconds(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "1x", "d1", "1.5d", "-1d", "soon", True, 2.5, None, "999w"])
def test_anything_else_is_no_duration(text):
    with pytest.raises(DurationError):
        parse_duration(text)


def test_a_duration_is_written_back_in_its_largest_whole_unit():
    assert [format_duration(s) for s in (DAY, 14 * DAY, 5400, 3600, 90)] == [
        "1d",
        "2w",
        "90m",
        "1h",
        "90s",
    ]


def test_an_interval_below_the_floor_is_refused_naming_the_field(settings):
    settings.CRAWL_REFRESH_MIN_SECONDS = 3600
    assert validate_refresh_every("1h") == 3600
    assert validate_refresh_every("off") == 0
    with pytest.raises(InvalidInput) as short:
        validate_refresh_every("30m")
    assert short.value.message == (
        "refresh_every: at least 1h between re-crawls (CRAWL_REFRESH_MIN_SECONDS); got 30m."
    )
    with pytest.raises(InvalidInput) as typo:
        validate_refresh_every("1 fortnight", field="--every")
    assert typo.value.message.startswith("--every: expected a duration like 30m, 6h, 1d or 2w")


# --- the API and the command --------------------------------------------------------------


@pytest.mark.django_db
def test_the_api_sets_changes_and_clears_a_crawl_s_schedule(alice, make_member):
    client = alice.client()
    created = client.post(
        "/api/v1/workspaces/acme/sources",
        json.dumps({"kind": "crawl", "url": "https://harbour.example/", "refresh_every": "1d"}),
        content_type="application/json",
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["refresh_every"] == DAY
    assert body["next_run_at"] is not None
    assert body["last_run"] is None
    url = f"/api/v1/workspaces/acme/sources/{body['id']}"

    def patch(value, member=alice):
        return member.client().patch(
            url, json.dumps({"refresh_every": value}), content_type="application/json"
        )

    assert patch("6h").json()["refresh_every"] == 6 * 3600
    assert patch(7200).json()["refresh_every"] == 7200
    for value, expected in [
        ("10m", "refresh_every: at least 1h between re-crawls"),
        ("soon", "refresh_every: expected a duration like 30m, 6h, 1d or 2w"),
        (-5, "refresh_every: expected"),
    ]:
        refused = patch(value)
        assert refused.status_code == 422, value
        assert refused.json()["error"]["message"].startswith(expected), refused.json()
    assert Source.objects.get(pk=body["id"]).refresh_every == 7200  # refusals changed nothing
    cleared = patch("off").json()
    assert (cleared["refresh_every"], cleared["next_run_at"]) == (None, None)
    viewer = make_member("vera", workspace="acme", role=Role.VIEWER)
    assert patch("1d", member=viewer).status_code == 403
    # Only crawls are fetched again: a text source refuses a schedule, and keeps its options.
    text, _ = do_create_text_source(workspace=alice.workspace, title="Notes", text="Tides.")
    refused = alice.client().patch(
        f"/api/v1/workspaces/acme/sources/{text.pk}",
        json.dumps({"refresh_every": "1d", "known_only": True}),
        content_type="application/json",
    )
    assert refused.status_code == 422
    assert "only crawls" in refused.json()["error"]["message"]
    text.refresh_from_db()
    assert (text.refresh_every, text.settings.get("known_only")) == (None, None)


@pytest.mark.django_db
def test_crawl_every_sets_the_schedule_and_a_bad_duration_exits_2(alice, settings):
    out, err = StringIO(), StringIO()
    call_command(
        "crawl", "https://harbour.example/", "--workspace", "acme", "--every", "1d",
        stdout=out, stderr=err,
    )  # fmt: skip
    result = json.loads(out.getvalue())
    assert result["refresh_every"] == DAY
    assert Source.objects.get(pk=result["source"]).refresh_every == DAY
    assert "re-crawled every 1d" in err.getvalue()
    for bad, says in [("5x", "--every: expected a duration"), ("10m", "--every: at least 1h")]:
        with pytest.raises(CommandError) as usage:
            call_command(
                "crawl", "https://harbour.example/", "--workspace", "acme", "--every", bad,
                stdout=StringIO(), stderr=StringIO(),
            )  # fmt: skip
        assert usage.value.returncode == 2
        assert str(usage.value).startswith(says)
    assert Source.objects.count() == 1  # the refused ones created nothing


# --- the scheduler ------------------------------------------------------------------------


def crawl_tasks(source: Source) -> int:
    return DBTaskResult.objects.filter(
        task_path=CRAWL_TASK, args_kwargs__kwargs__source_id=source.pk
    ).count()


def scheduled(workspace, name: str, *, due_in: float, status: str = "done") -> Source:
    source = do_create_crawl(
        workspace=workspace,
        url=f"https://{name}.example/",
        mode="single",
        refresh_every="1d",
        start=False,
    )
    Source.objects.filter(pk=source.pk).update(
        status=status, next_run_at=timezone.now() + timedelta(seconds=due_in)
    )
    return source


@pytest.mark.django_db
def test_the_recrawl_job_starts_each_due_source_once_whichever_worker_runs_it(
    alice, settings, django_capture_on_commit_callbacks
):
    settings.UPKEEP_JOBS = {"recrawl": settings.UPKEEP_JOBS["recrawl"]}
    due = scheduled(alice.workspace, "due", due_in=-60)
    later = scheduled(alice.workspace, "later", due_in=3600)
    running = scheduled(alice.workspace, "running", due_in=-60, status="running")
    deleting = scheduled(alice.workspace, "deleting", due_in=-60, status="deleting")
    do_create_crawl(workspace=alice.workspace, url="https://never.example/", mode="single")

    do_queue_due_jobs(worker_id="w1")
    ScheduledJob.objects.filter(name="recrawl").update(next_run_at=timezone.now())
    assert do_queue_due_jobs(worker_id="w1") == ["recrawl"]
    assert do_queue_due_jobs(worker_id="w2") == []
    before = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        first = do_run_upkeep_job(name="recrawl", worker_id="w1")
        # A second run at once (a slot queued twice, an admin's "run now"): nothing is due.
        second = do_run_upkeep_job(name="recrawl", worker_id="w2")

    assert first.message == "1 scheduled re-crawl(s) started"
    assert first.details["started"] == [due.pk]
    assert second.message == "0 scheduled re-crawl(s) started"
    assert [crawl_tasks(s) for s in (due, later, running, deleting)] == [1, 0, 0, 0]
    due.refresh_from_db()
    assert due.status == "running"
    assert due.settings["scheduled"] is True
    assert due.next_run_at is not None and due.next_run_at >= before + timedelta(days=1)


@pytest.mark.django_db(transaction=True)
def test_two_workers_claiming_the_same_due_source_at_once_start_it_once(alice):
    """Both workers read the source as due and reach their claim while a third transaction
    holds its row; when it lets go, one claim wins and the other matches nothing."""
    due = scheduled(alice.workspace, "due", due_in=-60)
    results: list[QueuedRecrawls] = []
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            results.append(do_queue_due_recrawls())
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    with transaction.atomic():
        Source.objects.select_for_update().get(pk=due.pk)
        for thread in threads:
            thread.start()
        waiting = 0
        for _ in range(200):
            with connection.cursor() as cursor:
                # The activity view is read once per transaction unless its snapshot goes.
                cursor.execute("SELECT pg_stat_clear_snapshot()")
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
                waiting = cursor.fetchone()[0]
            if waiting == 2:
                break
            threading.Event().wait(0.05)
        assert waiting == 2, "both workers should be waiting on the source's row"
    for thread in threads:
        thread.join(timeout=30)
    assert not errors
    assert sorted(len(r.started) for r in results) == [0, 1]
    assert crawl_tasks(due) == 1
    assert Source.objects.get(pk=due.pk).status == "running"


# --- rounds against a real site -----------------------------------------------------------


@pytest.fixture
def small_site(settings) -> Iterator[CrawlSite]:
    settings.CRAWL_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    settings.CRAWL_TIMEOUT_SECONDS = 2.0
    with CrawlSite(crawl_delay=None) as site:
        site.pages = {
            "/sitemap.xml": sitemap(site, "/tides", "/fleet"),
            "/tides": html_page("Tides", ["Two high tides a day reach the quay steps."]),
            "/fleet": html_page("Fleet", ["Fourteen boats fish out of the harbour."]),
        }
        yield site


def sitemap(site: CrawlSite, *paths: str) -> Page:
    urls = "".join(f"<url><loc>{site.url(p)}</loc></url>" for p in paths)
    return Page(
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"{urls}</urlset>".encode(),
        XML,
    )


def run_round(source: Source) -> Source:
    do_start_crawl(source=source, enqueue=False)
    do_run_crawl(source_id=source.pk, process=lambda ids: do_process_documents(document_ids=ids))
    source.refresh_from_db()
    return source


CHANGES = ("added", "changed", "unchanged", "missing", "removed")


def only(**counts: int) -> dict[str, int]:
    """What a round did, as `changes` reads it: the counts named, the others 0."""
    return {change: counts.get(change, 0) for change in CHANGES}


def changes(source: Source) -> dict[str, int]:
    return {k: source.last_run[k] for k in CHANGES}


@pytest.mark.django_db
def test_a_page_the_sitemap_no_longer_lists_is_kept_through_the_grace_then_retired(
    alice, small_site, settings
):
    source = do_create_crawl(
        workspace=alice.workspace,
        url=small_site.url("/sitemap.xml"),
        mode="sitemap",
        rate=0,
        refresh_every="1d",
        start=False,
        enqueue=False,
    )
    source = run_round(source)
    assert changes(source) == only(added=2)
    assert source.last_run["round"] == 1
    assert source.finished_at is not None
    assert source.next_run_at == source.finished_at + timedelta(days=1)
    fleet = Document.objects.get(source=source, path=small_site.url("/fleet"))

    # The sitemap failing to load says nothing about its pages: none is taken for gone.
    listed = small_site.pages.pop("/sitemap.xml")
    source = run_round(source)
    assert source.last_run["missing"] == 0
    assert not CrawlPage.objects.filter(source=source, gone_at__isnull=False).exists()

    small_site.pages["/sitemap.xml"] = sitemap(small_site, "/tides")
    small_site.clear_log()
    source = run_round(source)
    assert changes(source) == only(unchanged=1, missing=1)
    assert source.last_run["round"] == 3
    assert not small_site.requests_to("/fleet")  # not listed: not fetched either
    page = CrawlPage.objects.get(source=source, url=small_site.url("/fleet"))
    assert page.status == "skipped"
    assert page.reason.startswith("no longer listed in the sitemap: gone since ")
    assert Document.objects.filter(pk=fleet.pk).exists()

    # Listed again within the grace period: it is back, unchanged, no longer marked.
    small_site.pages["/sitemap.xml"] = listed
    source = run_round(source)
    assert changes(source) == only(unchanged=2)
    page.refresh_from_db()
    assert page.gone_at is None

    small_site.pages["/sitemap.xml"] = sitemap(small_site, "/tides")
    settings.CRAWL_GONE_GRACE_SECONDS = 0
    source = run_round(source)
    assert changes(source) == only(unchanged=1, removed=1)
    assert not Document.objects.filter(pk=fleet.pk).exists()
    assert source.counters["documents"] == 1
    page.refresh_from_db()
    assert page.reason == "no longer listed in the sitemap: gone; its document was removed"
    assert (page.document_id, page.etag, page.last_modified) == (None, "", "")
    api = alice.client().get(f"/api/v1/workspaces/acme/sources/{source.pk}").json()
    assert api["last_run"]["removed"] == 1
    assert api["last_run"]["round"] == 5
    assert api["counters"]["pages_removed"] == 1
    pages = alice.client().get(f"/api/v1/workspaces/acme/sources/{source.pk}/pages").json()
    assert {p["url"]: p["run_change"] for p in pages["items"]} == {
        small_site.url("/tides"): "unchanged",
        small_site.url("/fleet"): "removed",
    }
