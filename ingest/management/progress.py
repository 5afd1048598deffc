"""Waiting for a source from the command line, as `ingest --wait` and `crawl --wait` do.

Both show a progress bar on stderr while the work runs (in the worker, or in the command's
own process when no worker is alive), then print one JSON line with the source's counters on
stdout and exit 1 if anything failed. The bar, the polling and the report are the same for
both; only what the bar counts differs.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

from django.core.management.base import CommandError, OutputWrapper
from tqdm import tqdm

from ingest.models import Source
from ingest.selectors import get_failures

POLL_SECONDS = 0.5
# The crawl page counters a report lists under "pages".
PAGE_COUNTERS = ("discovered", "fetched", "skipped_robots", "skipped", "failed", "ingested")


def progress_bar(*, unit: str, total: int | None = None) -> tqdm:
    """A bar on stderr; silent when stderr is not a terminal (tqdm's `disable=None`)."""
    return tqdm(total=total, unit=unit, file=sys.stderr, disable=None, dynamic_ncols=True)


def wait_for_source(source: Source, *, show: Callable[[Source], object]) -> None:
    """Poll the source (refreshed in place) until it is no longer queued or running,
    showing its progress after every poll."""
    while True:
        source.refresh_from_db()
        show(source)
        if not source.is_active:
            return
        time.sleep(POLL_SECONDS)


def report_source(
    source: Source,
    *,
    stdout: OutputWrapper,
    what: str,
    pages: bool = False,
    warnings: OutputWrapper | None = None,
) -> None:
    """Print the source's outcome as one JSON line (with the crawl's page counters if
    `pages`) and, to `warnings` if given, its warning; raise CommandError (exit 1) naming
    how many of `what` failed unless everything succeeded."""
    source.refresh_from_db()
    counters = source.counters
    failed = get_failures(source)
    outcome = {
        "source": source.pk,
        "status": source.status,
        **({"pages": {k: counters.get(f"pages_{k}", 0) for k in PAGE_COUNTERS}} if pages else {}),
        "documents": counters.get("documents", 0),
        "failed": failed,
        "chunks": counters.get("chunks", 0),
        "embedded": counters.get("embedded", 0),
    }
    stdout.write(json.dumps(outcome))
    if warnings is not None and source.warning:
        warnings.write(source.warning)
    if failed or source.status != "done":
        raise CommandError(f"{len(failed)} {what} failed; source is {source.status}.", returncode=1)
