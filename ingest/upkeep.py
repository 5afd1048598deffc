"""The scheduled upkeep job of the ingest app (UPKEEP_JOBS; system/upkeep.py): no source's
work is left waiting with nothing queued to do it.

Slices hand their rest on, retry what failed outright and are handed back by a stopping
worker or by the heartbeat check (ingest/actions/slices.py, system/worker.py). What is left
is what none of those can see: a task that failed before its slice began (the database went
away between the claim and the first query), one removed from the queue by hand, a queue
restored from an older backup. This job finds running sources with documents or pages
waiting and no task of theirs queued or running, and queues their work again.
"""

from __future__ import annotations

from ingest.actions.slices import do_requeue_stranded_work
from system.upkeep import JobOutcome


def requeue_stranded_work() -> JobOutcome:
    requeued = do_requeue_stranded_work()
    if not requeued:
        return JobOutcome.ok("no waiting work without a task")
    documents = sum(requeued.values())
    return JobOutcome.ok(
        f"queued again the waiting work of {len(requeued)} source(s) ({documents} document(s))",
        {"sources": {str(pk): count for pk, count in requeued.items()}},
    )
