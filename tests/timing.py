"""What the suite's time goes to, printed at the end of every run.

A suite that grows with every issue gets slow one test at a time, and nobody notices until
a change waits half an hour for its checks. So every run ends with the ten slowest tests
(setup, call and teardown together: a fixture that starts a server counts), and with the
tests over `SLOW_SECONDS` that do not say why they are slow: those carry
`@pytest.mark.slow(reason="...")` (a whole module may set `pytestmark`). Nothing here fails
a test on time — machines differ; the list is for the reader.

Under xdist the workers run the tests and the controller prints, so the marker's reason
travels in the report's user properties. The first test each worker runs is marked as
such in both lists: its time includes the worker's own start, which on a slow host pushed
a 4-second test over 20 s.

The same marker orders the run: xdist hands out whole files (`--dist loadfile`) in the
order they were collected, so a file of slow tests collected last would leave one worker
running it alone while the other sits idle. Files holding a slow test are collected first
(longest jobs first), the rest keep their order behind them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import pytest

SLOW_SECONDS = 20.0
SHOWN = 10
_REASON = "slow_reason"

_seconds: dict[str, float] = defaultdict(float)
_reasons: dict[str, str] = {}
_first_on: dict[str, str] = {}  # a worker's id -> the first test it reported


def slow_reason(item: pytest.Item) -> str:
    """The reason a test's `slow` markers give ("" when none gives one): a test may carry
    a bare `slow` and a module's or its own `slow(reason=...)` besides."""
    for marker in item.iter_markers("slow"):
        reason = marker.kwargs.get("reason") or (marker.args[0] if marker.args else "")
        if reason:
            return str(reason)
    return ""


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files with more tests marked `slow(reason=...)` (over 20 s) first; the rest keep the
    order of the other plugins (pytest-django puts each kind of database test together),
    except the browser tests' files, spread evenly among them. Needs xdist's
    `--no-loadscope-reorder` (pyproject's addopts), which otherwise sends the files with the
    most tests first, whatever they cost.

    A browser test waits on its page much of the time (a fifth of a core idle while both
    workers ran browser files, collected last, together): spread out, a browser file mostly
    runs beside a file that keeps the other core busy."""
    slow_tests: Counter[Path] = Counter(item.path for item in items if slow_reason(item))
    items.sort(key=lambda item: -slow_tests[item.path])  # a stable sort
    items[:] = _browser_files_spread(items, first=sum(1 for i in items if slow_tests[i.path]))


def _browser_files_spread(items: list[pytest.Item], *, first: int) -> list[pytest.Item]:
    """`items` with the files under tests/browser/ after `first` spread evenly among the
    other files after it; each file's tests stay together and in order."""
    head, rest = items[:first], items[first:]
    files: dict[Path, list[pytest.Item]] = {}
    for item in rest:
        files.setdefault(item.path, []).append(item)
    browser = [tests for path, tests in files.items() if path.parent.name == "browser"]
    others = [tests for path, tests in files.items() if path.parent.name != "browser"]
    if not browser or not others:
        return items
    step = len(others) / (len(browser) + 1)
    before = [round(step * (k + 1)) for k in range(len(browser))]  # other files ahead of each
    spread: list[list[pytest.Item]] = []
    placed = 0
    for index, tests in enumerate(others):
        while placed < len(browser) and before[placed] <= index:
            spread.append(browser[placed])
            placed += 1
        spread.append(tests)
    return head + [item for tests in spread + browser[placed:] for item in tests]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    reason = slow_reason(item)
    if reason:
        item.user_properties.append((_REASON, reason))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _first_on.setdefault(_worker(report), report.nodeid)
    _seconds[report.nodeid] += report.duration
    for key, value in report.user_properties:
        if key == _REASON:
            _reasons[report.nodeid] = str(value)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not _seconds or hasattr(config, "workerinput"):
        return
    slowest = sorted(_seconds.items(), key=lambda pair: pair[1], reverse=True)
    terminalreporter.section(f"the {SHOWN} slowest tests (setup + call + teardown)")
    for nodeid, seconds in slowest[:SHOWN]:
        terminalreporter.write_line(_line(nodeid, seconds))
    unexplained = [
        (nodeid, seconds)
        for nodeid, seconds in slowest
        if seconds > SLOW_SECONDS and nodeid not in _reasons
    ]
    if unexplained:
        terminalreporter.section(
            f"over {SLOW_SECONDS:.0f}s without @pytest.mark.slow(reason=...)", yellow=True
        )
        for nodeid, seconds in unexplained:
            terminalreporter.write_line(_line(nodeid, seconds))


def _line(nodeid: str, seconds: float) -> str:
    """One test in either list: its time, its id, and whether it carried a worker's start."""
    return f"{seconds:7.1f}s  {nodeid}{first_label(nodeid, _first_on)}"


def _worker(report: pytest.TestReport) -> str:
    """The xdist worker that ran the test ("gw0"; xdist's controller hands each report on
    with its worker as `node`), or "main" in a run without workers."""
    gateway = getattr(getattr(report, "node", None), "gateway", None)
    return str(getattr(gateway, "id", "") or "main")


def first_label(nodeid: str, first_on: dict[str, str]) -> str:
    """A note after a test that was the first its worker ran: its time includes the
    worker's own start (its test database migrated, the embedding model and spaCy loaded
    and their libraries imported, 10-20 s), whatever the test itself costs."""
    worker = next((worker for worker, first in first_on.items() if first == nodeid), None)
    if worker is None:
        return ""
    if worker == "main":
        return "  (the run's first test: includes its start)"
    return f"  (the first test on {worker}: includes the worker's start)"
