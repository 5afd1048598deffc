"""`manage.py crawl URL --workspace SLUG [--mode single|sitemap|recursive] [--max-pages N]
[--max-depth D] [--allow PATTERN ...] [--deny PATTERN ...] [--rate R] [--subdomains] [--wait]`

Creates a crawl source and starts it. With `--wait`, a progress bar runs until the crawl and
the processing of its pages finish, then one JSON line with the counters:
`{"source": id, "status": ..., "pages": {"discovered", "fetched", "skipped_robots", "skipped",
"failed", "ingested"}, "documents": n, "failed": [{"url"|"path": ..., "error": ...}],
"chunks": n, "embedded": n}`. With no worker alive, `--wait` does the work in this process.
Exit 0 when every page and document succeeded, 1 when some failed, 2 on usage errors.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from ingest.actions.crawl import (
    do_create_crawl_source,
    do_run_crawl,
    do_start_crawl,
    validate_crawl_settings,
)
from ingest.actions.pipeline import do_process_documents
from ingest.models import CrawlPage, CrawlPageStatus, Document, DocumentStatus, Source
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
        parser.add_argument("--name", default="", help="source name (default: the URL)")
        parser.add_argument("--wait", action="store_true", help="wait, show progress, print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = workspace_for_command(options["workspace"])
        try:
            crawl = validate_crawl_settings(
                url=options["url"],
                mode=options["mode"],
                max_pages=options["max_pages"],
                max_depth=options["max_depth"],
                allow=options["allow"],
                deny=options["deny"],
                rate=options["rate"],
                include_subdomains=options["subdomains"],
                use_llms_txt=not options["no_llms_txt"],
            )
        except InvalidInput as exc:
            raise CommandError(exc.message, returncode=2) from exc
        inline = options["wait"] and get_worker_status().status != "ok"
        try:
            source = do_create_crawl_source(workspace=workspace, crawl=crawl, name=options["name"])
            source = do_start_crawl(source=source, enqueue=not inline)
        except DomainError as exc:
            raise CommandError(exc.message, returncode=1) from exc
        self.stderr.write(f"source {source.pk}: crawling {crawl.url} ({crawl.mode})")
        if not options["wait"]:
            self.stdout.write(
                json.dumps({"source": source.pk, "status": source.status, "url": crawl.url})
            )
            return
        with tqdm(unit="page", file=sys.stderr, disable=None, dynamic_ncols=True) as bar:

            def show(current: Source) -> None:
                counters = current.counters
                bar.total = counters.get("pages_discovered", 0)
                bar.n = bar.total - counters.get("pages_queued", 0)
                bar.set_postfix(
                    ingested=counters.get("pages_ingested", 0),
                    failed=counters.get("pages_failed", 0),
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
                while source.status in {"queued", "running"}:
                    time.sleep(0.5)
                    source.refresh_from_db()
                    show(source)
        self._report(source)

    def _report(self, source: Source) -> None:
        source.refresh_from_db()
        counters = source.counters
        failed = [
            {"url": p.url, "error": p.reason}
            for p in CrawlPage.objects.filter(
                source=source, status=CrawlPageStatus.FAILED
            ).order_by("id")
        ] + [
            {"path": d.path, "error": d.error}
            for d in Document.objects.filter(source=source, status=DocumentStatus.FAILED).order_by(
                "path"
            )
        ]
        pages = {
            key: counters.get(f"pages_{key}", 0)
            for key in ("discovered", "fetched", "skipped_robots", "skipped", "failed", "ingested")
        }
        self.stdout.write(
            json.dumps(
                {
                    "source": source.pk,
                    "status": source.status,
                    "pages": pages,
                    "documents": counters.get("documents", 0),
                    "failed": failed,
                    "chunks": counters.get("chunks", 0),
                    "embedded": counters.get("embedded", 0),
                }
            )
        )
        if failed or source.status != "done":
            raise CommandError(
                f"{len(failed)} page(s) or document(s) failed; source is {source.status}.",
                returncode=1,
            )
