"""The run's order (tests/timing.py): browser files are spread among the others, each
file's tests kept together and in order, the slow files left first; and its report: a
worker's first test is marked as carrying the worker's start."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.timing import _browser_files_spread, first_label


@dataclass
class Item:  # the one attribute of pytest.Item the ordering reads
    path: Path
    name: str


def items(*files: str) -> list[Item]:
    return [Item(Path(f"tests/{f}"), f"{f}#{n}") for f in files for n in range(2)]


def order(result: list[Any]) -> list[str]:
    return [str(i.path.relative_to("tests")) for i in result[::2]]


def test_browser_files_are_spread_among_the_others_after_the_slow_ones():
    run = items("ingest/slow.py", *(f"api/a{n}.py" for n in range(6)), "browser/b1.py",
                "browser/b2.py")  # fmt: skip

    spread = _browser_files_spread(run, first=2)  # type: ignore[arg-type]

    assert order(spread) == [
        "ingest/slow.py", "api/a0.py", "api/a1.py", "browser/b1.py", "api/a2.py",
        "api/a3.py", "browser/b2.py", "api/a4.py", "api/a5.py",
    ]  # fmt: skip
    assert sorted(i.name for i in spread) == sorted(i.name for i in run)
    assert all(a.path == b.path for a, b in zip(spread[::2], spread[1::2], strict=True))


def test_a_file_split_by_the_database_plugins_order_is_put_back_together():
    run = items("api/a.py", "browser/b.py", "api/c.py") + items("api/a.py")

    spread = _browser_files_spread(run, first=0)  # type: ignore[arg-type]

    assert [i.name for i in spread] == [
        "api/a.py#0", "api/a.py#1", "api/a.py#0", "api/a.py#1", "browser/b.py#0",
        "browser/b.py#1", "api/c.py#0", "api/c.py#1",
    ]  # fmt: skip


def test_only_the_first_test_of_a_worker_is_marked_as_carrying_its_start():
    first_on = {"gw0": "tests/a.py::test_one", "gw1": "tests/b.py::test_two"}  # as reported

    assert first_label("tests/a.py::test_one", first_on) == (
        "  (the first test on gw0: includes the worker's start)"
    )
    assert first_label("tests/a.py::test_three", first_on) == ""
    assert first_label("tests/a.py::test_one", {"main": "tests/a.py::test_one"}) == (
        "  (the run's first test: includes its start)"
    )
