"""The curation log: every action is one event, and the log has one writer
(knowledge/actions/curation/events.py, `record_event`). A second place that creates
`CurationEvent` rows — a create, a bulk create, the class called — fails here, so every
event gets the same summary bound and the same undo link.

The source tree (the packages import-linter checks) is read as syntax, not imported: a
writer is a call of the class (or a name it was imported as), or of a creating method on
a chain that starts at it (`CurationEvent.objects.for_workspace(ws).create(...)`). The
archive's import copies rows with plain INSERTs (knowledge/archive/importer.py): a copy,
not a decision, and not Python calls this scan could see.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledge.actions.curation.block import do_block_name
from knowledge.actions.curation.entities import do_rename_entity
from knowledge.models import CurationEvent
from tests.knowledge.actions.curation.curation_data import FIRST, WORLD, entity

ROOT = Path(__file__).resolve().parents[4]
ONE_WRITER = "knowledge/actions/curation/events.py"
MODEL = "CurationEvent"
CREATING = frozenset({"create", "bulk_create", "get_or_create", "update_or_create"})


def source_files() -> Iterator[Path]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for package in config["tool"]["importlinter"]["root_packages"]:
        yield from sorted((ROOT / package).rglob("*.py"))


def writes(source: str) -> list[int]:
    """The lines of `source` that create CurationEvent rows."""
    tree = ast.parse(source)
    names = {MODEL} | {
        alias.asname
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name == MODEL and alias.asname
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (isinstance(func, ast.Name) and func.id in names) or (
            isinstance(func, ast.Attribute)
            and func.attr in CREATING
            and _root_name(func.value) in names
        ):
            found.append(node.lineno)
    return sorted(found)


def _root_name(node: ast.expr) -> str | None:
    """The name a chain of attributes and calls starts at."""
    while isinstance(node, ast.Attribute | ast.Call):
        node = node.value if isinstance(node, ast.Attribute) else node.func
    return node.id if isinstance(node, ast.Name) else None


def test_only_the_event_log_creates_curation_events():
    writers = {
        str(path.relative_to(ROOT)): lines
        for path in source_files()
        if (lines := writes(path.read_text()))
    }
    assert list(writers) == [ONE_WRITER]
    assert len(writers[ONE_WRITER]) == 1  # record_event's one create


def test_the_scan_sees_every_way_of_creating_an_event_and_nothing_else():
    creating = [
        "CurationEvent.objects.create(workspace=ws)",
        "CurationEvent.objects.for_workspace(ws).create(action='merge')",
        "CurationEvent.objects.bulk_create([row])",
        "CurationEvent.objects.get_or_create(pk=1)",
        "CurationEvent(workspace=ws).save()",
        "from knowledge.models import CurationEvent as Event\nEvent.objects.create()",
    ]
    for source in creating:
        assert writes(source), source
    reading_or_other = [
        "CurationEvent.objects.filter(pk=1).update(summary='')",
        "CurationEvent.objects.for_workspace(ws).select_for_update().first()",
        "CurationRule.objects.create(event=event)",
        "record_event(ws, 'merge', actor=None, payload={}, summary='')",
    ]
    for source in reading_or_other:
        assert not writes(source), source


@pytest.fixture
def world(llm):
    llm.responder = WORLD
    return llm


def test_every_action_is_one_event(world, ingest_text, alice):
    ingest_text(FIRST)
    do_rename_entity(workspace=alice.workspace, entity_id=entity("Google").pk, name="Google LLC")
    do_block_name(workspace=alice.workspace, name="spam")
    assert list(CurationEvent.objects.values_list("action", flat=True)) == ["block", "rename"]
