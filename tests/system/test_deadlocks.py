"""retry_on_deadlock against a real deadlock: two connections take two row locks in
opposite orders; PostgreSQL aborts one, which is run again and then succeeds."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction
from django.utils import timezone

from system.deadlocks import is_deadlock, retry_on_deadlock
from system.models import WorkerHeartbeat

pytestmark = pytest.mark.django_db(transaction=True)


def make_rows() -> tuple[int, int]:
    now = timezone.now()
    rows = [
        WorkerHeartbeat.objects.create(
            worker_id=name, hostname="h", pid=1, started_at=now, last_seen_at=now
        )
        for name in ("first", "second")
    ]
    return rows[0].pk, rows[1].pk


def run_rivals(*, allowed: int) -> tuple[list[str], list[BaseException]]:
    """Two threads, each on its own connection, lock the two rows in opposite orders (the
    first attempts wait for each other in between, so they deadlock), each through
    retry_on_deadlock with `allowed` attempts. Returns the attempts and the errors."""
    first, second = make_rows()
    meet = threading.Barrier(2)
    attempts: list[str] = []
    errors: list[BaseException] = []

    def lock_both(name: str, a: int, b: int) -> None:
        attempts.append(name)
        with transaction.atomic():
            WorkerHeartbeat.objects.select_for_update().get(pk=a)
            if attempts.count(name) == 1:
                meet.wait(timeout=30)
            WorkerHeartbeat.objects.select_for_update().get(pk=b)
            WorkerHeartbeat.objects.filter(pk=a).update(hostname=f"done by {name}")

    def rival(name: str, a: int, b: int) -> None:
        try:
            retry_on_deadlock(lambda: lock_both(name, a, b), attempts=allowed)
        except BaseException as error:  # reported to the test
            errors.append(error)
        finally:
            connection.close()

    threads = [
        threading.Thread(target=rival, args=("a", first, second)),
        threading.Thread(target=rival, args=("b", second, first)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return attempts, errors


def test_a_transaction_aborted_to_break_a_deadlock_is_run_again():
    attempts, errors = run_rivals(allowed=5)
    assert errors == []
    # One of the two was aborted by the database and ran a second time.
    assert sorted(attempts.count(name) for name in ("a", "b")) == [1, 2]
    hosts = set(WorkerHeartbeat.objects.values_list("hostname", flat=True))
    assert hosts == {"done by a", "done by b"}


def test_without_retries_the_same_deadlock_fails_as_a_deadlock():
    attempts, errors = run_rivals(allowed=1)
    assert len(errors) == 1 and is_deadlock(errors[0])
    assert sorted(attempts) == ["a", "b"]
