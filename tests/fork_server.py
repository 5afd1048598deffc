"""Task workers for tests, forked from a process that has already imported the heavy
libraries.

A test that needs a worker starts the real `manage.py worker` in its own process, and many
tests start two (one killed, one that finishes). Each start used to import PyTorch,
sentence-transformers and spaCy again: about 6.5 of the ~10 CPU-seconds a worker takes
before its first task, twenty times a run. Here one server process per test process imports
them once; each worker is a fork of it that sets the environment the test asked for, changes
directory and runs `manage.py` exactly as `python manage.py worker ...` would (Django's
settings, checks and the worker's own start are all in the child). The libraries are only
imported, never used, before the fork, so no thread pool is copied into a child.

What this does not exercise, a worker's start from a bare interpreter, is covered by the
tests that start `manage.py serve` (web and worker) and the worker command's own tests.

Standard library only: the server runs as a script and must not import Django (settings
are read from each worker's environment, after the fork).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import traceback
from typing import Any, NoReturn

PRELOADED = (
    "torch", "transformers", "sentence_transformers", "spacy",
    # What `manage.py worker` imports next, none of it reading settings or the environment
    # when imported (about a CPU-second a worker). Not prometheus_client: it chooses its
    # multiprocess mode from PROMETHEUS_MULTIPROC_DIR when imported.
    "mcp.server", "mcp.types", "psycopg", "pypdf", "docx", "markdown_it", "trafilatura",
    "lxml.html", "rapidfuzz", "networkx", "pydantic", "starlette", "httpx",
)  # fmt: skip


# The server (this file run as a script) ------------------------------------------------


def _run_child(request: dict[str, Any]) -> NoReturn:
    """In the forked child: become `python <argv...>` in the requested environment."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    script = os.path.abspath(request["argv"][0])
    sys.argv = list(request["argv"])
    sys.path[0] = os.path.dirname(script)
    code = 0
    try:
        import runpy

        runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if not isinstance(stop.code, int | None):
            print(stop.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def _returncode(status: int) -> int:
    """Popen's convention: the exit code, or minus the signal that ended the process."""
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def serve() -> None:
    """Read one JSON request per line on stdin ({argv, env, cwd}); answer {"pid"} for each
    and {"exited", "returncode"} when a child ends. Ends (killing its children) at EOF."""
    for name in PRELOADED:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # children's output goes where the test's own stderr goes
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: set[int] = set()
    pending = b""
    while True:
        try:
            ready, _, _ = select.select([0, wake_read], [], [])
        except InterruptedError:
            continue
        if wake_read in ready:
            while True:
                try:
                    if not os.read(wake_read, 512):
                        break
                except BlockingIOError:
                    break
            _reap(children, replies)
        if 0 not in ready:
            continue
        data = os.read(0, 65536)
        if not data:
            for pid in children:
                os.kill(pid, signal.SIGKILL)
            return
        pending += data
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                os.close(wake_read)
                os.close(wake_write)
                replies.close()
                _run_child(request)
            children.add(pid)
            replies.write(json.dumps({"pid": pid}) + "\n")


def _reap(children: set[int], replies: Any) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        replies.write(json.dumps({"exited": pid, "returncode": _returncode(status)}) + "\n")


# The client (in the test process) ------------------------------------------------------


class ForkedProcess:
    """The part of `subprocess.Popen` the tests use, for a child of the fork server."""

    def __init__(self, server: ForkServer, pid: int) -> None:
        self._server = server
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._server.returncode(self.pid, timeout=0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            code = self._server.returncode(self.pid, timeout=timeout)
            if code is None:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout or 0)
            self.returncode = code
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class ForkServer:
    """One server process per test process, started on first use."""

    def __init__(self, *, env: dict[str, str], cwd: str) -> None:
        self._process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        self._lock = threading.Lock()
        self._changed = threading.Condition()
        self._started: list[int] = []
        self._exited: dict[int, int] = {}
        threading.Thread(target=self._read, name="fork-server-replies", daemon=True).start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            reply = json.loads(line)
            with self._changed:
                if "pid" in reply:
                    self._started.append(reply["pid"])
                else:
                    self._exited[reply["exited"]] = reply["returncode"]
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def alive(self) -> bool:
        return self._process.poll() is None

    def start(self, argv: list[str], *, env: dict[str, str], cwd: str) -> ForkedProcess:
        """Fork a child that runs `python <argv...>` with exactly `env`, in `cwd`."""
        assert self._process.stdin is not None
        request = json.dumps({"argv": argv, "env": env, "cwd": cwd}) + "\n"
        with self._lock:
            self._process.stdin.write(request.encode())
            self._process.stdin.flush()
            with self._changed:
                if not self._changed.wait_for(lambda: self._started or not self.alive(), 60):
                    raise RuntimeError("the fork server did not answer")
                if not self._started:
                    raise RuntimeError("the fork server has stopped")
                return ForkedProcess(self, self._started.pop(0))

    def returncode(self, pid: int, *, timeout: float | None) -> int | None:
        with self._changed:
            self._changed.wait_for(lambda: pid in self._exited or not self.alive(), timeout)
            return self._exited.get(pid)

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=30)


if __name__ == "__main__":
    serve()
