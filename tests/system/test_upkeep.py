"""Scheduled upkeep, in process: which worker queues a due job (one of several), a job that
is off or still running, how a run is recorded, and where it shows (the health report, the
staff status page). The real workers running the real jobs: test_upkeep_workers.py."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from prometheus_client.parser import text_string_to_metric_families

from system.actions.upkeep import RUN_TASK, do_queue_due_jobs, do_run_upkeep_job
from system.models import ScheduledJob

pytestmark = pytest.mark.django_db

HOUR = 3600
JOBS = {
    "counting": {"run": "tests.system.sample_jobs.count_workers", "every": HOUR},
    "broken": {"run": "tests.system.sample_jobs.broken", "every": HOUR},
    "off": {"run": "tests.system.sample_jobs.count_workers", "every": 0},
}


@pytest.fixture(autouse=True)
def sample_jobs(settings):
    settings.UPKEEP_JOBS = JOBS


def runs_queued(name: str) -> int:
    return DBTaskResult.objects.filter(task_path=RUN_TASK, args_kwargs__args__0=name).count()


def next_run(name: str) -> datetime:
    moment = ScheduledJob.objects.get(name=name).next_run_at
    assert moment is not None
    return moment


def make_due(*names: str) -> None:
    ScheduledJob.objects.filter(name__in=names).update(
        next_run_at=timezone.now() - timedelta(seconds=1)
    )


def test_a_worker_first_sees_a_job_due_one_interval_later_and_an_off_one_never():
    before = timezone.now()
    assert do_queue_due_jobs(worker_id="w1") == []
    jobs = {job.name: job for job in ScheduledJob.objects.all()}
    assert set(jobs) == {"counting", "broken", "off"}
    assert next_run("counting") >= before + timedelta(seconds=HOUR)
    assert jobs["off"].next_run_at is None


def test_a_due_job_is_queued_once_by_whichever_worker_claims_it_first():
    do_queue_due_jobs(worker_id="w1")
    make_due("counting", "off")
    ScheduledJob.objects.filter(name="off").update(every_seconds=0)

    assert do_queue_due_jobs(worker_id="w1") == ["counting"]
    assert do_queue_due_jobs(worker_id="w2") == []
    job = ScheduledJob.objects.get(name="counting")
    assert job.claimed_by == "w1"
    assert next_run("counting") > timezone.now() + timedelta(seconds=HOUR - 60)
    assert runs_queued("counting") == 1
    assert runs_queued("off") == 0


def test_the_next_slot_keeps_the_cadence_and_skips_the_slots_missed():
    do_queue_due_jobs(worker_id="w1")
    due = timezone.now() - timedelta(seconds=2 * HOUR + 60)
    ScheduledJob.objects.filter(name="counting").update(next_run_at=due)
    do_queue_due_jobs(worker_id="w1")
    assert next_run("counting") == due + timedelta(seconds=3 * HOUR)
    assert runs_queued("counting") == 1


def test_a_slot_is_skipped_while_the_last_run_is_still_queued():
    do_queue_due_jobs(worker_id="w1")
    make_due("counting")
    do_queue_due_jobs(worker_id="w1")
    make_due("counting")
    assert do_queue_due_jobs(worker_id="w2") == []
    assert runs_queued("counting") == 1
    assert next_run("counting") > timezone.now()


def test_a_changed_interval_reschedules_and_zero_turns_the_job_off(settings):
    do_queue_due_jobs(worker_id="w1")
    settings.UPKEEP_JOBS = {**JOBS, "counting": {**JOBS["counting"], "every": 0}}
    make_due("counting")
    assert do_queue_due_jobs(worker_id="w1") == []
    job = ScheduledJob.objects.get(name="counting")
    assert (job.every_seconds, job.next_run_at) == (0, None)
    assert runs_queued("counting") == 0


def test_a_run_records_its_outcome_and_a_failure_keeps_the_error_out_of_the_message():
    do_queue_due_jobs(worker_id="w1")
    outcome = do_run_upkeep_job(name="counting", worker_id="w9")
    job = ScheduledJob.objects.get(name="counting")
    assert (job.last_outcome, job.last_message, job.runs) == ("ok", outcome.message, 1)
    assert job.ran_by == "w9"
    assert job.running_since is None
    assert job.last_started_at is not None
    assert job.last_finished_at is not None
    assert job.last_started_at <= job.last_finished_at

    with pytest.raises(ValueError, match="unreadable"):
        do_run_upkeep_job(name="broken")
    broken = ScheduledJob.objects.get(name="broken")
    assert (broken.last_outcome, broken.last_message) == ("failed", "raised ValueError")
    assert "payroll.pdf" in broken.last_details["error"]


def test_health_shows_every_job_with_its_last_and_next_run_and_no_error_text():
    do_queue_due_jobs(worker_id="w1")
    do_run_upkeep_job(name="counting")
    with pytest.raises(ValueError, match="unreadable"):
        do_run_upkeep_job(name="broken")

    response = Client().get("/api/v1/health")
    upkeep = response.json()["upkeep"]
    assert set(upkeep) == {"counting", "broken", "off"}
    assert upkeep["counting"]["outcome"] == "ok"
    assert upkeep["counting"]["last_run"] is not None
    assert upkeep["counting"]["next_run"] is not None
    assert upkeep["broken"]["message"] == "raised ValueError"
    assert upkeep["off"] == {**upkeep["off"], "enabled": False, "next_run": None, "outcome": None}
    assert "payroll" not in response.content.decode()


def test_the_status_page_shows_staff_the_jobs_and_refuses_everyone_else():
    do_queue_due_jobs(worker_id="w1")
    with pytest.raises(ValueError, match="unreadable"):
        do_run_upkeep_job(name="broken")
    users = get_user_model().objects
    staff = Client()
    staff.force_login(users.create_user("ops", password="x", is_staff=True))
    member = Client()
    member.force_login(users.create_user("member", password="x"))

    page = staff.get("/admin/status/")
    assert page.status_code == 200
    text = page.content.decode()
    for name in ("counting", "broken", "off", "raised ValueError", "payroll.pdf"):
        assert name in text
    assert member.get("/admin/status/").status_code == 403
    anonymous = Client().get("/admin/status/")
    assert anonymous.status_code == 302
    assert anonymous["Location"].startswith("/admin/login/")


def test_metrics_report_each_job_s_last_run_and_outcome(settings):
    settings.METRICS_TOKEN = "scraper-token-0123456789"
    do_queue_due_jobs(worker_id="w1")
    do_run_upkeep_job(name="counting")
    with pytest.raises(ValueError, match="unreadable"):
        do_run_upkeep_job(name="broken")

    response = Client(headers={"Authorization": "Bearer scraper-token-0123456789"}).get("/metrics")
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
        if sample.name.startswith("graphloom_upkeep")
    }
    started = ScheduledJob.objects.get(name="counting").last_started_at
    assert started is not None
    assert samples[
        ("graphloom_upkeep_last_run_timestamp_seconds", (("job", "counting"),))
    ] == pytest.approx(started.timestamp())
    assert (
        samples[("graphloom_upkeep_last_outcome", (("job", "broken"), ("outcome", "failed")))] == 1
    )
    assert not any(labels == (("job", "off"),) for _, labels in samples)


def test_the_admin_lists_the_jobs_and_lets_no_one_add_one():
    do_queue_due_jobs(worker_id="w1")
    admin = Client()
    admin.force_login(get_user_model().objects.create_superuser("root", password="x"))
    page = admin.get("/admin/system/scheduledjob/")
    assert page.status_code == 200
    assert "counting" in page.content.decode()
    assert admin.get("/admin/system/scheduledjob/add/").status_code == 403
