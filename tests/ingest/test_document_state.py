"""Document state: the moves a document's status may make (DOCUMENT_STATUS_MOVES beside
DocumentStatus, ingest/models.py) are exactly the moves the code makes, every write of the
status goes through ingest/actions/document_state.py, and a move not allowed raises."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ingest.actions.document_state import InvalidTransition, do_transition, do_transition_rows
from ingest.actions.sources import do_create_source
from ingest.models import Document, DocumentStatus

S = DocumentStatus
WORKING = (S.QUEUED, S.PARSED, S.CHUNKED, S.EMBEDDED, S.EXTRACTED)

# Every move the code makes, with where it makes it.
MOVES_MADE: list[tuple[tuple[S, ...], S, str]] = [
    (tuple(S), S.QUEUED, "sources.do_add_file: changed bytes, or a failed one added again"),
    (tuple(S), S.QUEUED, "sources.do_reingest_source"),
    ((S.FAILED, S.CANCELLED), S.QUEUED, "sources.do_retry_source"),
    (tuple(S), S.QUEUED, "duplicates._requeue: detached from its original"),
    ((S.DUPLICATE,), S.QUEUED, "duplicates._promote: unfinished content"),
    ((S.DUPLICATE,), S.DONE, "duplicates._promote: finished content"),
    (WORKING, S.PARSED, "stages.parse: first parse, or changed content on its way"),
    ((S.DONE,), S.PARSED, "boilerplate._requeue: its boilerplate changed"),
    ((S.PARSED,), S.CHUNKED, "stages.chunk"),
    ((S.CHUNKED, S.EMBEDDED), S.EMBEDDED, "stages.embed (again on a resumed run)"),
    ((S.EMBEDDED,), S.EXTRACTED, "the extract stage's report"),
    ((S.EMBEDDED,), S.FAILED, "the extract stage's report: a window failed"),
    (WORKING, S.DUPLICATE, "duplicates.do_mark_duplicate, from parse"),
    (WORKING, S.DONE, "pipeline: past its last stage, whichever stages it has"),
    (WORKING, S.CANCELLED, "sources.do_cancel_source, pipeline, slices._hand_on"),
    (WORKING, S.FAILED, "pipeline._fail, slices._retry_or_fail"),
    ((S.CANCELLED,), S.FAILED, "pipeline._fail: cancelled while its stage ran"),
]


@pytest.mark.parametrize(
    ("froms", "to"), [(froms, to) for froms, to, _ in MOVES_MADE], ids=[w for *_, w in MOVES_MADE]
)
def test_every_move_the_code_makes_is_allowed(froms, to):
    for from_status in froms:
        assert to in from_status.allowed_next(), f"{from_status} -> {to}"


def test_no_move_is_allowed_that_the_code_does_not_make():
    made = {(f, to) for froms, to, _ in MOVES_MADE for f in froms}
    allowed = {(f, to) for f in S for to in f.allowed_next()}
    assert allowed == made


def test_settled_documents_only_go_back_to_work_or_duplicates_take_over():
    assert S.DONE.allowed_next() == {S.QUEUED, S.PARSED}
    assert S.FAILED.allowed_next() == {S.QUEUED}
    assert S.CANCELLED.allowed_next() == {S.QUEUED, S.FAILED}
    assert S.DUPLICATE.allowed_next() == {S.QUEUED, S.DONE}


def test_a_move_not_allowed_raises_before_anything_is_written():
    # No database here: a write would fail the test with another error.
    document = Document(status=S.DONE)
    with pytest.raises(InvalidTransition, match="from 'done' to 'chunked'"):
        do_transition(document=document, to=S.CHUNKED)
    assert document.status == S.DONE
    with pytest.raises(InvalidTransition, match="from 'failed' to 'done'"):
        do_transition_rows(documents=Document.objects.none(), from_statuses=[S.FAILED], to=S.DONE)
    with pytest.raises(InvalidTransition, match="from 'embedded' to 'chunked'"):
        do_transition_rows(
            documents=Document.objects.none(), from_statuses=[S.PARSED, S.EMBEDDED], to=S.CHUNKED
        )


@pytest.mark.django_db
def test_rows_move_only_from_the_statuses_named(alice):
    source = do_create_source(workspace=alice.workspace, kind="upload", name="rows")
    for status in S:
        Document.objects.create(
            workspace=alice.workspace, source=source, path=f"{status}.md", status=status
        )
    moved = do_transition_rows(
        documents=Document.objects.filter(source=source),
        from_statuses=WORKING,
        to=S.FAILED,
        error="Stopped",
    )
    assert moved == len(WORKING)
    rows = Document.objects.filter(source=source).values_list("path", "status", "error")
    assert {path: (status, error) for path, status, error in rows} == {
        f"{s}.md": (S.FAILED, "Stopped") if s in WORKING else (s, "") for s in S
    }


# Modules of the apps that may write Document.status: the helper only.
ROOT = Path(__file__).resolve().parents[2]
APPS = ("agents", "config", "explorer", "ingest", "knowledge", "system", "workspaces")
HELPER = ROOT / "ingest" / "actions" / "document_state.py"


def _names_document_status(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id == "DocumentStatus" for n in ast.walk(node))


def _status_writes(path: Path) -> list[int]:
    """Lines assigning a DocumentStatus to a `.status`, or updating rows' `status` to one."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Assign) and _names_document_status(node.value):
            targets = [t for target in node.targets for t in ast.walk(target)]
            if any(isinstance(t, ast.Attribute) and t.attr == "status" for t in targets):
                lines.append(node.lineno)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "update"
            and any(k.arg == "status" and _names_document_status(k.value) for k in node.keywords)
        ):
            lines.append(node.lineno)
    return lines


def test_every_status_write_goes_through_the_helper():
    found = {
        f"{path.relative_to(ROOT)}:{line}"
        for app in APPS
        for path in (ROOT / app).rglob("*.py")
        if path != HELPER and "migrations" not in path.parts
        for line in _status_writes(path)
    }
    assert not found, "Document.status written outside ingest/actions/document_state.py"
