"""`manage.py crawl URL --workspace SLUG [--mode single|sitemap|recursive] [--max-pages N]
[--max-depth D] [--allow PATTERN ...] [--deny PATTERN ...] [--rate R] [--subdomains]
[--tags a,b] [--topic TEXT] [--known-only] [--every DURATION] [--render]
[--wait]`

`--tags` are stored on the source as an upload's are (trimmed, at most 50 characters each,
duplicates once): the sources list filters by them.

Creates a crawl source and starts it. With `--every 1d` (30m, 6h, 1d, 2w; at least
CRAWL_REFRESH_MIN_SECONDS) the workers re-crawl it on that schedule, counted from the end of
each run. With `--topic`, pages not about it (their embedding's
similarity to the topic's below CRAWL_TOPIC_MIN_SIMILARITY) are kept but not extracted, and
counted as `off_topic`. Pages that seem to need JavaScript are flagged and counted
(`needs_javascript`); with `--render` they are loaded in headless Chromium (refused, exit 2,
when the server has no Chromium or Playwright). With `--known-only`, extraction adds
evidence for entities the workspace already has and creates none. With `--wait`, a progress
bar runs until the crawl and the processing of its pages finish, then one JSON line with
the counters: `{"source": id, "status": ..., "pages": {"discovered", "fetched",
"skipped_robots", "skipped", "failed", "ingested"}, "documents": n,
"failed": [{"url"|"path": ..., "error": ...}], "chunks": n, "embedded": n}`. With no worker
alive, `--wait` does the work in this process.
Exit 0 when every page and document succeeded, 1 when some failed, 2 on usage errors.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.actions.crawl import (
    CrawlSettings,
    do_create_crawl,
    do_run_crawl,
    validate_refresh_every,
)
from ingest.actions.pipeline import do_process_documents
from ingest.crawler.durations import format_duration
from ingest.management.progress import progress_bar, report_source, wait_for_source
from ingest.models import Source
from system.selectors import get_worker_status
from workspaces.commands import workspace_for_command
from workspaces.errors import DomainError, InvalidInput


class Command(BaseCommand):
    help = "Crawl a URL (one page, a sitemap, or a same-site recursive crawl) into a workspace."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("url", metavar="URL")
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument(
            "--mode", choices=["single", "sitemap", "recursive"], default="recursive"
        )
        parser.add_argument("--max-pages", type=int, metavar="N")
        parser.add_argument("--max-depth", type=int, metavar="D")
        parser.add_argument(
            "--allow", nargs="+", default=[], metavar="PATTERN", help="regexes URLs must match"
        )
        parser.add_argument(
            "--deny", nargs="+", default=[], metavar="PATTERN", help="regexes URLs must not match"
        )
        parser.add_argument(
            "--rate", type=float, metavar="R", help="requests/s per host (0: no limit)"
        )
        parser.add_argument("--subdomains", action="store_true", help="also crawl subdomains")
        parser.add_argument(
            "--no-llms-txt", action="store_true", help="ignore the site's /llms.txt"
        )
        parser.add_argument(
            "--topic",
            metavar="TEXT",
            help="what the pages should be about; the others are kept but not extracted",
        )
        parser.add_argument(
            "--known-only",
            action="store_true",
            help="only add evidence for entities already known (none created)",
        )
        parser.add_argument(
            "--every",
            metavar="DURATION",
            help="re-crawl on a schedule: 30m, 6h, 1d, 2w (the workers start each round)",
        )
        parser.add_argument(
            "--render",
            action="store_true",
            help="load pages that need JavaScript in headless Chromium (same-origin only)",
        )
        parser.add_argument("--name", default="", help="source name (default: the URL)")
        parser.add_argument("--tags", default="", help="comma-separated tags for the source")
        parser.add_argument("--wait", action="store_true", help="wait, show progress, print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = workspace_for_command(options["workspace"])
        worker_alive = get_worker_status().status == "ok"
        inline = options["wait"] and not worker_alive
        try:
            every = (
                0
                if options["every"] is None
                else validate_refresh_every(options["every"], field="--every")
            )
            source = do_create_crawl(
                workspace=workspace,
                url=options["url"],
                mode=options["mode"],
                max_pages=options["max_pages"],
                max_depth=options["max_depth"],
                allow=options["allow"],
                deny=options["deny"],
                rate=options["rate"],
                include_subdomains=options["subdomains"],
                use_llms_txt=not options["no_llms_txt"],
                render=options["render"],
                topic=options["topic"],
                known_only=True if options["known_only"] else None,
                name=options["name"],
                tags=options["tags"].split(","),
                refresh_every=every,
                enqueue=not inline,
            )
        except InvalidInput as exc:
            raise CommandError(exc.message, returncode=2) from exc
        except DomainError as exc:
            raise CommandError(exc.message, returncode=1) from exc
        crawl = CrawlSettings.from_source(source)
        self.stderr.write(f"source {source.pk}: crawling {crawl.url} ({crawl.mode})")
        if every:
            self.stderr.write(
                f"re-crawled every {format_duration(every)} after each run"
                + ("" if worker_alive else " (by the workers: none is running now)")
            )
        if not options["wait"]:
            outcome = {"source": source.pk, "status": source.status, "url": crawl.url}
            if every:
                outcome["refresh_every"] = every
            self.stdout.write(json.dumps(outcome))
            return
        with progress_bar(unit="page") as bar:

            def show(current: Source) -> None:
                progress = current.progress
                bar.total = progress.pages
                bar.n = progress.pages_settled
                bar.set_postfix(
                    ingested=current.counters.get("pages_ingested", 0),
                    failed=current.counters.get("pages_failed", 0),
                )
                bar.refresh()

            if inline:
                self.stderr.write("no worker is running: crawling in this process")
                do_run_crawl(
                    source_id=source.pk,
                    on_progress=show,
                    process=lambda ids: do_process_documents(document_ids=ids),
                )
            else:
                wait_for_source(source, show=show)
        report_source(source, stdout=self.stdout, what="page(s) or document(s)", pages=True)
