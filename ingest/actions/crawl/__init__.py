"""Crawls: create and start them (`start`), check what is asked for (`request`), run the
frontier loop (`loop`) after seeding each round (`seed`), on the page rows (`pages`) with what
one run needs (`run`); pages gone from the site (`gone`); re-crawls on a schedule
(`schedule`). The page decisions that need no database — scope, query variants, what
a fetch's answer means — are `ingest.crawler.policy`'s.

Callers import the public names from here.
"""

from ingest.actions.crawl.loop import do_run_crawl
from ingest.actions.crawl.request import (
    CrawlRequest,
    CrawlSettings,
    validate_crawl_settings,
    validate_refresh_every,
)
from ingest.actions.crawl.schedule import (
    QueuedRecrawls,
    do_queue_due_recrawls,
    do_set_refresh_every,
)
from ingest.actions.crawl.start import (
    do_create_crawl,
    do_create_crawl_source,
    do_rerun_source,
    do_start_crawl,
)

__all__ = [
    "CrawlRequest",
    "CrawlSettings",
    "QueuedRecrawls",
    "do_create_crawl",
    "do_create_crawl_source",
    "do_queue_due_recrawls",
    "do_rerun_source",
    "do_run_crawl",
    "do_set_refresh_every",
    "do_start_crawl",
    "validate_crawl_settings",
    "validate_refresh_every",
]
