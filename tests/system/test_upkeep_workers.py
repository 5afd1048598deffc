"""Scheduled upkeep with real workers: two of them, every job due at once, and each job run
exactly once, by one of them, with its outcome recorded and its next run moved on."""

from __future__ import annotations

import time
from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from ingest.selectors import vector_indexes
from ingest.vector_tables import CHUNK_VECTORS
from knowledge.actions.communities import COMPUTE_TASK, do_compute_communities
from knowledge.models import ENTITY_VECTORS, CommunityRun, Entity
from system.actions.upkeep import RUN_TASK
from system.models import ScheduledJob
from system.upkeep import configured_jobs
from tests.knowledge.community_data import two_cliques
from tests.support import start_worker, stop_process, wait_for
from tests.vector_rows import fill_vectors
from workspaces.actions.workspaces import do_create_workspace

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WORKER_ENV = {
    "GRAPHLOOM_UPKEEP_CHECK_SECONDS": "0.1",
    "UPKEEP_COMMUNITIES_MIN_CHANGES": "5",
    # Workspace vector indexes at this test's scale: above 40 rows, whatever the share.
    "VECTOR_EXACT_MAX_ROWS": "40",
    "VECTOR_WORKSPACE_INDEX_MAX_SHARE": "1",
}


def all_runs_finished(names: set[str]) -> bool:
    jobs = ScheduledJob.objects.filter(name__in=names, runs__gte=1, running_since__isnull=True)
    results = DBTaskResult.objects.filter(task_path__in=[RUN_TASK, COMPUTE_TASK])
    return jobs.count() == len(names) and not results.exclude(status="SUCCESSFUL").exists()


@pytest.mark.slow(reason="two real workers")
def test_with_two_workers_each_due_job_runs_exactly_once():
    changed = do_create_workspace(slug="gamma")
    unchanged = do_create_workspace(slug="delta")
    two_cliques(changed)
    two_cliques(unchanged)
    do_compute_communities(workspace=unchanged)
    computed_at = CommunityRun.objects.get(workspace=unchanged).computed_at
    large = do_create_workspace(slug="epsilon")
    vectors = np.random.default_rng(3).standard_normal((60, 384))
    fill_vectors(large, vectors, vectors, model="test-vectors")
    due = timezone.now() - timedelta(seconds=1)
    jobs = configured_jobs()
    names = set(jobs)
    ScheduledJob.objects.bulk_create(
        ScheduledJob(name=name, every_seconds=spec.every, next_run_at=due)
        for name, spec in jobs.items()
    )

    workers = [start_worker(name, **WORKER_ENV) for name in ("w-a", "w-b")]
    try:
        wait_for(lambda: all_runs_finished(names), timeout=240, what="every job's run")
        time.sleep(1)  # ten more checks by each worker: none may queue a job again
    finally:
        for worker in workers:
            stop_process(worker)
        built = [i.name for t in (CHUNK_VECTORS, ENTITY_VECTORS) for i in vector_indexes(t)[1]]
        with connection.cursor() as cursor:  # indexes outlive the test's flush of the rows
            for name in built:
                cursor.execute(f"DROP INDEX IF EXISTS {name}")

    runs = {job.name: job for job in ScheduledJob.objects.all()}
    for name, job in runs.items():
        assert job.runs == 1, name
        assert job.claimed_by in {"w-a", "w-b"}
        assert job.ran_by in {"w-a", "w-b"}
        assert job.next_run_at is not None
        assert job.next_run_at > due + timedelta(seconds=job.every_seconds - 60)
        results = DBTaskResult.objects.filter(task_path=RUN_TASK, args_kwargs__args__0=name)
        assert results.count() == 1, name
        assert results.get().return_value == f"{job.last_outcome}: {job.last_message}"
    # No LLM in the workers' environment.
    assert (runs["llm_review"].last_outcome, runs["llm_review"].last_message) == (
        "skipped",
        "no LLM configured",
    )
    # The never computed workspaces got their maps; the unchanged one kept its own.
    assert runs["communities"].last_outcome == "ok"
    assert CommunityRun.objects.filter(workspace=changed).exists()
    assert CommunityRun.objects.filter(workspace=large).exists()
    assert CommunityRun.objects.get(workspace=unchanged).computed_at == computed_at
    assert DBTaskResult.objects.filter(task_path=COMPUTE_TASK).count() == 2
    assert runs["backfill"].last_outcome == "ok"
    assert not Entity.objects.filter(embedding__isnull=True).exists()
    assert runs["prune_report"].last_outcome == "ok"
    assert runs["prune_report"].last_details["delta"]["orphan_entities"] == 13

    upkeep = Client().get("/api/v1/health").json()["upkeep"]
    assert {name: job["outcome"] for name, job in upkeep.items()} == {
        "llm_review": "skipped",
        "communities": "ok",
        "backfill": "ok",
        "prune_report": "ok",
        "stranded_work": "ok",
        "agent_calls": "ok",
        "vector_indexes": "ok",
        "recrawl": "ok",
    }
    assert runs["stranded_work"].last_message == "no waiting work without a task"
    assert runs["recrawl"].last_message == "0 scheduled re-crawl(s) started"
    # The large workspace got indexes of its own, built CONCURRENTLY by a real worker.
    assert {
        f"chunk_embedding_hnsw_384_ws{large.pk}",
        f"entity_embedding_hnsw_384_ws{large.pk}",
    } <= set(runs["vector_indexes"].last_details["built"])
    assert set(runs["vector_indexes"].last_details["built"]) <= set(built)
