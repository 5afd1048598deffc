"""The fork server that starts the tests' task workers (tests/fork_server.py): a child runs
its script with exactly the environment and directory asked for, and reports its end the
way `subprocess.Popen` does, so the worker tests' kills and exit codes mean what they say."""

from __future__ import annotations

import signal
import subprocess

import pytest

from tests.support import fork_server

SCRIPT = """
import os, sys, time
with open("seen.txt", "w") as out:
    out.write(f"{os.environ.get('ASKED', '-')} {os.environ.get('DJANGO_SETTINGS_MODULE', '-')}")
    out.write(f" {sys.argv[1:]}")
    out.write(f" {'torch' in sys.modules}")
if sys.argv[1] == "sleep":
    time.sleep(60)
sys.exit(int(sys.argv[1]) if sys.argv[1].isdigit() else 0)
"""


@pytest.fixture
def server():
    """The test process's own fork server, the one its task workers come from (its start
    imports PyTorch and the rest: ~10 CPU-s)."""
    return fork_server()


def test_a_child_runs_with_exactly_the_environment_and_directory_asked_for(server, tmp_path):
    (tmp_path / "child.py").write_text(SCRIPT)
    process = server.start(
        [str(tmp_path / "child.py"), "3"], env={"ASKED": "yes"}, cwd=str(tmp_path)
    )

    assert process.wait(timeout=60) == 3
    # Not the server's own DJANGO_SETTINGS_MODULE; and the server had imported PyTorch
    # before forking (the point of it), so the child has it already.
    assert (tmp_path / "seen.txt").read_text() == "yes - ['3'] True"


def test_a_killed_child_reports_minus_the_signal_and_poll_waits_for_nothing(server, tmp_path):
    (tmp_path / "child.py").write_text(SCRIPT)
    process = server.start([str(tmp_path / "child.py"), "sleep"], env={}, cwd=str(tmp_path))
    assert process.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=0.2)

    process.send_signal(signal.SIGKILL)

    assert process.wait(timeout=60) == -signal.SIGKILL
    process.terminate()  # a process that has ended is left alone, as Popen does


def test_an_exception_in_the_child_exits_1_with_its_traceback(server, tmp_path):
    (tmp_path / "child.py").write_text("raise RuntimeError('boom')\n")
    process = server.start([str(tmp_path / "child.py")], env={}, cwd=str(tmp_path))

    assert process.wait(timeout=60) == 1
