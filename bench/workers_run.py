"""The several-workers benchmark itself; run it through bench/workers.py (see there)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.db.models import Count
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from ingest.actions.sources import do_add_file, do_create_source, do_start_source
from ingest.models import Chunk, Document, Source
from knowledge.models import (
    Entity,
    ExtractionRun,
    Mention,
    Relation,
    RelationEvidence,
    SourceExtraction,
)
from workspaces.actions.workspaces import do_create_workspace

ROOT = Path(__file__).resolve().parent.parent
DOCUMENT_TASKS = {"ingest.tasks.process_documents", "ingest.tasks.process_document"}


def pages(root: Path, *, count: int, skip: int, min_kb: int, max_kb: int) -> dict[str, bytes]:
    """`count` pages of the manual between `min_kb` and `max_kb`, in name order after the
    first `skip` such pages: the same pages every time."""
    found = sorted(
        path
        for path in root.rglob("*.html")
        if "_static" not in path.parts and min_kb * 1024 <= path.stat().st_size <= max_kb * 1024
    )
    chosen = found[skip : skip + count]
    if len(chosen) < count:
        raise SystemExit(f"only {len(chosen)} pages of {min_kb}-{max_kb} kB under {root}")
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in chosen}


@contextmanager
def workers(count: int, label: str, log_dir: Path, threads: int) -> Iterator[list[str]]:
    """`count` real `manage.py worker` processes on this database; stopped with SIGTERM.
    `threads` > 0 caps each one's intra-op threads (torch, BLAS) at that many."""
    ids = [f"bench-{label}-{i}-{time.time_ns()}" for i in range(count)]
    env = {**os.environ, "GRAPHLOOM_WORKER_HEARTBEAT_SECONDS": "1"}
    if threads > 0:
        env.update({name: str(threads) for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")})
    procs = []
    for worker_id in ids:
        log = (log_dir / f"{worker_id}.log").open("wb")
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    str(ROOT / "manage.py"),
                    "worker",
                    "--no-reload",
                    "--interval",
                    "0.2",
                    "--worker-id",
                    worker_id,
                ],
                env=env,
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    try:
        yield ids
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def new_source(label: str, files: dict[str, bytes]) -> Source:
    workspace = do_create_workspace(slug=f"bench-workers-{label}-{time.time_ns()}")
    source = do_create_source(workspace=workspace, kind="upload", name=label)
    for path, data in files.items():
        do_add_file(source=source, path=path, chunks=[data])
    return source


# A source still running with no task waiting or running for this long never finishes:
# a task failed and left its documents unfinished (the checks then say which).
STALLED_AFTER_SECONDS = 15.0


def run_source(source: Source, *, docs_per_task: int, timeout: float) -> tuple[float, bool]:
    """Queue the source's documents for the workers; (wall seconds until it is finished and
    no task is waiting or running, whether it stalled instead)."""
    settings.INGEST_DOCUMENTS_PER_TASK = docs_per_task
    started = time.perf_counter()
    do_start_source(source=source)
    idle_since = None
    while True:
        now = time.perf_counter()
        source.refresh_from_db()
        busy = DBTaskResult.objects.filter(status__in=["READY", "RUNNING"]).exists()
        if not source.is_active and not busy:
            return now - started, False
        idle_since = None if busy else (idle_since or now)
        if idle_since is not None and now - idle_since > STALLED_AFTER_SECONDS:
            return idle_since - started, True
        if now - started > timeout:
            raise RuntimeError(f"source {source.pk} not finished after {timeout:.0f} s")
        time.sleep(0.25)


def _document_ids(task: DBTaskResult) -> list[int]:
    args = task.args_kwargs.get("args") or []
    if not args:
        return []
    first = args[0]
    return [int(i) for i in first] if isinstance(first, list) else [int(first)]


def _overlapping(tasks: list[DBTaskResult]) -> list[DBTaskResult]:
    """Tasks that ran at the same time as another one of the list."""
    spans = sorted((t for t in tasks if t.started_at and t.finished_at), key=lambda t: t.started_at)
    return [
        a
        for i, a in enumerate(spans)
        if any(b.started_at < a.finished_at and a.started_at < b.finished_at for b in spans[:i])
        or any(b.started_at < a.finished_at for b in spans[i + 1 :])
    ]


def task_checks(since: Any, worker_ids: list[str], source: Source) -> dict[str, Any]:
    """The queue's view. A slice queues the rest of its documents as a new task with the
    same documents (ingest/actions/slices.py), so a document in several tasks is normal;
    what would be double work is two tasks holding it *at the same time*."""
    tasks = list(DBTaskResult.objects.filter(enqueued_at__gte=since))
    by_args: dict[tuple[str, str], list[DBTaskResult]] = {}
    for t in tasks:
        by_args.setdefault((t.task_path, json.dumps(t.args_kwargs, sort_keys=True)), []).append(t)
    by_document: dict[int, list[DBTaskResult]] = {}
    for t in tasks:
        if t.task_path in DOCUMENT_TASKS:
            for document_id in _document_ids(t):
                by_document.setdefault(document_id, []).append(t)
    in_tasks = {document_id: len(_overlapping(ts)) for document_id, ts in by_document.items()}
    documents = set(Document.objects.filter(source=source).values_list("pk", flat=True))
    ran_by = Counter(t.worker_ids[-1] for t in tasks if t.worker_ids)
    return {
        "tasks": len(tasks),
        "tasks_by_path": dict(Counter(t.task_path for t in tasks)),
        "tasks_per_worker": [ran_by.get(w, 0) for w in worker_ids],
        "tasks_failed": sum(1 for t in tasks if t.status != "SUCCESSFUL"),
        "tasks_claimed_more_than_once": sum(1 for t in tasks if len(t.worker_ids) > 1),
        "slices": sum(1 for t in tasks if t.task_path in DOCUMENT_TASKS),
        "tasks_with_same_arguments": sum(len(_overlapping(ts)) for ts in by_args.values()),
        "documents_in_more_than_one_task": sum(1 for n in in_tasks.values() if n > 1),
        "documents_in_no_task": len(documents - set(by_document)),
    }


def _duplicates(queryset: Any, *fields: str) -> int:
    """Rows beyond the first of each group of `fields` (0 when every row is unique)."""
    groups = queryset.values(*fields).annotate(n=Count("id")).filter(n__gt=1)
    return sum(group["n"] - 1 for group in groups)


def outcome(source: Source) -> dict[str, Any]:
    workspace = source.workspace
    chunks = Chunk.objects.filter(document__source=source)
    account = SourceExtraction.objects.filter(source=source).first()
    runs = ExtractionRun.objects.filter(workspace=workspace).count()
    mentions = Mention.objects.filter(workspace=workspace)
    evidence = RelationEvidence.objects.filter(workspace=workspace)
    return {
        "documents": Document.objects.filter(source=source).count(),
        "documents_by_status": dict(
            Counter(Document.objects.filter(source=source).values_list("status", flat=True))
        ),
        "chunks": chunks.count(),
        "chunks_per_document": dict(
            chunks.values("document__path")
            .annotate(n=Count("id"))
            .values_list("document__path", "n")
        ),
        "chunks_cut_twice": _duplicates(chunks, "document", "char_start", "char_end"),
        "extraction_runs": runs,
        "windows_extracted": account.windows_extracted if account else 0,
        "windows_cached": account.windows_cached if account else 0,
        "mentions": mentions.count(),
        "mentions_stored_twice": _duplicates(
            mentions, "chunk", "entity", "char_start", "char_end", "surface_form"
        ),
        "evidence": evidence.count(),
        "evidence_stored_twice": _duplicates(
            evidence, "chunk", "relation", "char_start", "char_end"
        ),
        "entities": Entity.objects.filter(workspace=workspace, state="active").count(),
        "relations": Relation.objects.filter(workspace=workspace, state="active").count(),
    }


def unfinished(run: dict[str, Any]) -> dict[str, int]:
    """Each check's count of work left undone (0 everywhere: everything finished)."""
    return {
        "tasks_failed": run["tasks_failed"],
        "documents_in_no_task": run["documents_in_no_task"],
        "documents_not_done": run["documents"] - run["documents_by_status"].get("done", 0),
        "stalled": int(run["stalled"]),
    }


def doubles(run: dict[str, Any], first: dict[str, Any]) -> dict[str, int]:
    """Each check's count of things done twice (0 everywhere: nothing doubled)."""
    ours, theirs = run["chunks_per_document"], first["chunks_per_document"]
    return {
        "tasks_claimed_more_than_once": run["tasks_claimed_more_than_once"],
        "tasks_with_same_arguments": run["tasks_with_same_arguments"],
        "documents_in_more_than_one_task": run["documents_in_more_than_one_task"],
        "chunks_differing_from_first_run": abs(run["chunks"] - first["chunks"]),
        "documents_with_other_chunk_count": sum(
            1 for path in set(ours) | set(theirs) if ours.get(path) != theirs.get(path)
        ),
        "chunks_cut_twice": run["chunks_cut_twice"],
        "extraction_runs_differing_from_first_run": abs(
            run["extraction_runs"] - first["extraction_runs"]
        ),
        "windows_extracted_twice": max(0, run["windows_extracted"] - run["extraction_runs"]),
        # A document processed again finds its windows cached. So does a slice's
        # continuation resuming a document whose extraction the slice stopped between two
        # windows (its stored runs are read back, not extracted again: windows_extracted_twice
        # above), so cached windows count as doubled only in a run without continuations.
        "windows_cached_beyond_first_run": (
            max(0, run["windows_cached"] - first["windows_cached"])
            if run["slices"] <= first["slices"]
            else 0
        ),
        "mentions_stored_twice": run["mentions_stored_twice"],
        "evidence_stored_twice": run["evidence_stored_twice"],
    }


def warm_up(files: dict[str, bytes], ids: list[str], timeout: float) -> int:
    """Give every worker a first task (models load then); returns how many workers got one."""
    source = new_source(f"warm-{len(ids)}", files)
    since = timezone.now()
    run_source(source, docs_per_task=1, timeout=timeout)  # a stall shows in the real run
    ran = {
        t.worker_ids[-1]
        for t in DBTaskResult.objects.filter(enqueued_at__gte=since)
        if t.worker_ids
    }
    return len(ran & set(ids))


def one_run(
    count: int,
    files: dict[str, bytes],
    warm_files: dict[str, bytes],
    args: argparse.Namespace,
    log_dir: Path,
) -> dict[str, Any]:
    source = new_source(f"w{count}", files)
    with workers(count, f"w{count}", log_dir, args.threads_per_worker) as ids:
        warmed = warm_up(warm_files, ids, args.timeout)
        connection.close()
        load_before = os.getloadavg()
        since = timezone.now()
        seconds, stalled = run_source(
            source, docs_per_task=args.docs_per_task, timeout=args.timeout
        )
        load_after = os.getloadavg()
    result = {
        "workers": count,
        "warmed_workers": warmed,
        "seconds": round(seconds, 1),
        "stalled": stalled,
        **outcome(source),
        **task_checks(since, ids, source),
        "load_average_1m_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
    }
    result["chunks_per_s"] = round(result["chunks"] / seconds, 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description="Several workers; see bench/workers.py.")
    parser.add_argument("--root", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    parser.add_argument("--docs", type=int, default=96)
    parser.add_argument("--workers", default="1,2,4", help="worker counts, the first is the base")
    parser.add_argument("--docs-per-task", type=int, default=4)
    parser.add_argument("--min-kb", type=int, default=13)
    parser.add_argument("--max-kb", type=int, default=40)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument(
        "--threads-per-worker", type=int, default=0, help="OMP_NUM_THREADS of each worker"
    )
    args = parser.parse_args()
    if not (args.root / "index.html").is_file():
        raise SystemExit(f"{args.root}/index.html not found (apt-get install python3.11-doc)")
    counts = [int(n) for n in args.workers.split(",")]
    # Stopped with SIGTERM: unwind, so the workers started here are stopped too.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))

    call_command("migrate", verbosity=0)
    files = pages(args.root, count=args.docs, skip=0, min_kb=args.min_kb, max_kb=args.max_kb)
    warm_files = pages(args.root, count=2 * max(counts), skip=0, min_kb=9, max_kb=12)
    print(
        json.dumps(
            {
                "documents": len(files),
                "megabytes": round(sum(map(len, files.values())) / 1e6, 2),
                "docs_per_task": args.docs_per_task,
                "threads_per_worker": args.threads_per_worker or "default",
                "cpus": os.cpu_count(),
                "load_average": [round(x, 2) for x in os.getloadavg()],
            }
        ),
        flush=True,
    )
    log_dir = Path(tempfile.mkdtemp(prefix="graphloom-bench-workers-logs-"))
    runs: list[dict[str, Any]] = []
    failed = False
    for count in counts:
        run = one_run(count, files, warm_files, args, log_dir)
        first = runs[0] if runs else run
        run["ratio_to_first"] = round(run["chunks_per_s"] / first["chunks_per_s"], 2)
        run["processed_twice"] = doubles(run, first)
        run["nothing_processed_twice"] = not any(run["processed_twice"].values())
        run["unfinished"] = unfinished(run)
        run["everything_finished"] = not any(run["unfinished"].values())
        failed |= not (run["nothing_processed_twice"] and run["everything_finished"])
        runs.append(run)
        shown = {k: v for k, v in run.items() if k != "chunks_per_document"}
        print(json.dumps(shown), flush=True)
    print(
        "summary:",
        json.dumps(
            [
                {
                    key: run[key]
                    for key in (
                        "workers",
                        "seconds",
                        "chunks",
                        "chunks_per_s",
                        "ratio_to_first",
                        "nothing_processed_twice",
                        "everything_finished",
                    )
                }
                for run in runs
            ]
        ),
        f"(worker logs: {log_dir})",
        flush=True,
    )
    if failed:
        sys.exit(1)
