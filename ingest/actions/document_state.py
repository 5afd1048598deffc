"""Document state: the one way a Document's status changes.

The moves a status may make are declared beside it (`DOCUMENT_STATUS_MOVES`,
`DocumentStatus.allowed_next`, ingest/models.py); a move not declared raises
`InvalidTransition` before anything is written. That is a bug in the caller, never a
person's mistake, so it is no domain error (and no HTTP status).

Two forms, as the callers write today:
- `do_transition`: one loaded document, checked against its status as loaded, saved with
  the other fields the caller set on it (a parse, a promotion) in the same row write;
- `do_transition_rows`: the rows of a queryset that are in the statuses the caller names
  (each checked), moved in one UPDATE; rows in any other status are left alone, so a row
  another worker moved meanwhile (a source cancelled) is not overwritten.
`do_fail` is the pipeline's failure of one loaded document, whose status as loaded may be
stale by then: its row is moved like rows are.

Creating a document with its first status (`Document.objects.create`, the default
`queued`) is no move and needs neither.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import QuerySet

from ingest.models import PENDING, Document, DocumentStatus

# What a document that fails may be found in: any stage, or cancelled while its stage ran.
_FAILABLE = (*PENDING, DocumentStatus.CANCELLED)


class InvalidTransition(Exception):
    """A document was to move between statuses that DOCUMENT_STATUS_MOVES does not allow."""

    def __init__(self, from_status: str, to: str) -> None:
        self.from_status, self.to = str(from_status), str(to)
        allowed = ", ".join(sorted(map(str, DocumentStatus(from_status).allowed_next())))
        super().__init__(
            f"A document cannot go from {self.from_status!r} to {self.to!r} "
            f"(from {self.from_status!r} only to: {allowed})."
        )


def check_transition(from_status: str, to: str) -> None:
    """Raise InvalidTransition unless a document in `from_status` may go to `to`."""
    if to not in DocumentStatus(from_status).allowed_next():
        raise InvalidTransition(from_status, to)


def do_transition(
    *,
    document: Document,
    to: DocumentStatus,
    error: str | None = None,
    fields: Iterable[str] = (),
) -> None:
    """Move a loaded document to `to` and save it: its status, its error when one is given
    ("" clears it), and the other `fields` the caller set on it, in one row write."""
    check_transition(document.status, to)
    document.status = to
    changed = [*fields, "status"]
    if error is not None:
        document.error = error
        changed.append("error")
    document.save(update_fields=[*changed, "updated_at"])


def do_transition_rows(
    *,
    documents: QuerySet[Document],
    from_statuses: Iterable[str],
    to: DocumentStatus,
    error: str | None = None,
    **changes: object,
) -> int:
    """Move those of `documents` whose status is one of `from_statuses` to `to` in one
    UPDATE, with their error when one is given and the other column `changes`; returns how
    many moved. `updated_at` is written only when given among `changes`, as the bulk moves
    always did."""
    allowed = tuple(dict.fromkeys(from_statuses))
    for from_status in allowed:
        check_transition(from_status, to)
    if error is not None:
        changes["error"] = error
    return documents.filter(status__in=allowed).update(status=to, **changes)


def do_fail(*, document: Document, error: str) -> None:
    """Fail a loaded document wherever its row is now: in a stage that broke halfway (what
    it had set on the object may never have been saved) or cancelled while the stage ran.
    A row deleted meanwhile is no error. The object says failed either way."""
    do_transition_rows(
        documents=Document.objects.filter(pk=document.pk),
        from_statuses=_FAILABLE,
        to=DocumentStatus.FAILED,
        error=error,
    )
    document.status = DocumentStatus.FAILED
    document.error = error
