"""The embedded PostgreSQL server: fresh start, unclean stops, restarts, clear failures.

Each test works on its own data directory under var/ (never the one the suite runs on),
with real processes: servers are really killed, pid files really go stale.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest
from django.conf import settings

from system import embedded_postgres
from tests.support import MANAGE_PY, wait_for

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pgdata() -> Iterator[Path]:
    """A data directory shared by this module's lifecycle tests, removed at the end."""
    path = Path(settings.BASE_DIR) / "var" / f"test-pgdata-{uuid.uuid4().hex[:8]}"
    yield path
    embedded_postgres.stop_server(path)
    shutil.rmtree(path, ignore_errors=True)
    (path.parent / f".{path.name}.lock").unlink(missing_ok=True)


def query(server: embedded_postgres.EmbeddedServer, sql: str) -> object:
    with psycopg.connect(server.uri(), autocommit=True) as conn:
        cursor = conn.execute(sql)
        if cursor.description is None:  # a command, not a query
            return None
        row = cursor.fetchone()
        return row[0] if row else None


def test_starts_from_an_empty_data_dir_with_pgvector(pgdata):
    assert not pgdata.exists()
    server = embedded_postgres.ensure_server(pgdata)
    assert (pgdata / "PG_VERSION").read_text().strip() == "18"
    query(server, "CREATE EXTENSION IF NOT EXISTS vector")
    assert query(server, "SELECT '[1,2,3]'::vector <-> '[1,2,4]'::vector") == 1.0
    query(server, "CREATE TABLE IF NOT EXISTS survivors (name text)")
    query(server, "INSERT INTO survivors VALUES ('before-restarts')")
    assert embedded_postgres.ensure_server(pgdata).pid == server.pid  # attaches, no second server


def test_a_killed_client_process_leaves_the_server_usable(pgdata):
    server = embedded_postgres.ensure_server(pgdata)
    code = (
        "import time, psycopg; from pathlib import Path; from system import embedded_postgres as e;"
        f"s = e.ensure_server(Path({str(pgdata)!r})); c = psycopg.connect(s.uri());"
        "c.execute('BEGIN'); c.execute('LOCK TABLE survivors'); print('ready', flush=True); time.sleep(600)"
    )
    client = subprocess.Popen(
        [sys.executable, "-c", code], cwd=settings.BASE_DIR, stdout=subprocess.PIPE
    )
    assert client.stdout is not None
    assert client.stdout.readline().strip() == b"ready"
    client.send_signal(signal.SIGKILL)
    client.wait()
    assert embedded_postgres.ensure_server(pgdata).pid == server.pid
    # The dead client's lock went with its connection: the table is writable again.
    query(server, "SET lock_timeout = '5s'; INSERT INTO survivors VALUES ('after-client-kill')")
    assert query(server, "SELECT count(*) FROM survivors") == 2


def test_a_killed_server_is_restarted_on_next_use_with_its_data(pgdata):
    old = embedded_postgres.ensure_server(pgdata)
    client = psycopg.connect(old.uri(), autocommit=True)  # its backend outlives the postmaster
    client.execute("SELECT 1")
    os.kill(old.pid, signal.SIGKILL)
    wait_for(lambda: not psutil.pid_exists(old.pid) or psutil.Process(old.pid).status() == "zombie")
    assert (pgdata / "postmaster.pid").exists()  # left behind, as after a crash
    new = embedded_postgres.ensure_server(pgdata)
    with contextlib.suppress(psycopg.Error):
        client.close()
    assert new.pid != old.pid
    assert query(new, "SELECT count(*) FROM survivors") == 2


def test_a_stale_pid_file_naming_an_unrelated_live_process_is_cleared(pgdata):
    embedded_postgres.ensure_server(pgdata)
    assert embedded_postgres.stop_server(pgdata)
    unrelated = subprocess.Popen(["sleep", "600"])
    try:
        pid_file = pgdata / "postmaster.pid"
        pid_file.write_text(f"{unrelated.pid}\n{pgdata}\n0\n5432\n{pgdata}\n\n0 0\nready\n")
        assert embedded_postgres.running_server(pgdata) is None
        server = embedded_postgres.ensure_server(pgdata)
        assert server.pid != unrelated.pid
        assert query(server, "SELECT count(*) FROM survivors") == 2
    finally:
        unrelated.kill()
        unrelated.wait()


def test_stop_then_start_keeps_data(pgdata):
    embedded_postgres.ensure_server(pgdata)
    assert embedded_postgres.stop_server(pgdata) is True
    assert embedded_postgres.running_server(pgdata) is None
    assert embedded_postgres.stop_server(pgdata) is False
    server = embedded_postgres.ensure_server(pgdata)
    assert query(server, "SELECT string_agg(name, ',' ORDER BY name) FROM survivors") == (
        "after-client-kill,before-restarts"
    )


@pytest.mark.slow(reason="initdb and every migration")
def test_dbshell_and_migrate_work_on_a_fresh_embedded_server(pgdata):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "GRAPHLOOM_PGDATA": str(pgdata),
        "GRAPHLOOM_DB_NAME": "shell_check",
    }
    env.pop("DATABASE_URL", None)
    migrate = subprocess.run(
        [sys.executable, MANAGE_PY, "migrate", "--noinput"], env=env, capture_output=True, text=True
    )
    assert migrate.returncode == 0, migrate.stderr
    shell = subprocess.run(
        [sys.executable, MANAGE_PY, "dbshell", "--", "-At", "-c",
         "SELECT extversion FROM pg_extension WHERE extname = 'vector'"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert shell.returncode == 0, shell.stderr
    assert shell.stdout.strip().startswith("0.")


def test_an_unusable_data_dir_fails_with_one_message_naming_database_url(tmp_path):
    blocker = Path(settings.BASE_DIR) / "var" / f"test-not-a-dir-{uuid.uuid4().hex[:8]}"
    blocker.write_text("a file where the data directory's parent should be")
    try:
        with pytest.raises(embedded_postgres.EmbeddedPostgresError) as error:
            embedded_postgres.ensure_server(blocker / "pgdata")
        assert "DATABASE_URL" in str(error.value)
        manage = subprocess.run(
            [sys.executable, MANAGE_PY, "migrate"],
            env={**os.environ, "GRAPHLOOM_PGDATA": str(blocker / "pgdata"), "DATABASE_URL": ""},
            capture_output=True,
            text=True,
        )
        assert manage.returncode == 1
        assert "DATABASE_URL" in manage.stderr
        assert "Traceback" not in manage.stderr
    finally:
        blocker.unlink()
