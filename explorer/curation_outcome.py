"""How a curation request answers, alike on the graph screen's panels (curation_views) and
on the review page (review_views): the outcome shown next to the control, the status it is
sent with, and the htmx trigger that tells the graph page what changed.

htmx swaps only 2xx answers by default, and a person who gets no visible answer cannot
tell what went wrong, so an htmx request gets 200 with the error in the answer; any other
client gets the same answer with the error's own status (409, 422).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from explorer.workspace_pages import WorkspaceRequest
from workspaces.errors import InvalidInput

GRAPH_CHANGED = "graphloom:graph-changed"


@dataclass
class Outcome:
    """What the last curation request did, shown in the panel: a message (the event's
    summary, or the error), the control it belongs to, and a merge's event for "Undo"."""

    control: str
    message: str
    error: bool = False
    status: int = 200
    undo_event: int | None = None
    # What the Undo button undoes: a merge (unmerge) or a relation change.
    undo_kind: str = "merge"


def answer_status(request: WorkspaceRequest, outcome: Outcome | None) -> int:
    """200 for htmx (which would not swap a 4xx answer: see the module docstring)."""
    if outcome is None or not outcome.error or request.htmx:
        return 200
    return outcome.status


def graph_changed(entity: int | None, removed: list[int]) -> str:
    """The `HX-Trigger` header that has the graph page redraw `entity` and drop `removed`."""
    return json.dumps({GRAPH_CHANGED: {"entity": entity, "removed": removed}})


def posted_id(request: WorkspaceRequest, name: str, message: str) -> int:
    """The id posted as `name`; InvalidInput saying `message` when it is not one."""
    try:
        return int(request.POST.get(name, ""))
    except ValueError:
        raise InvalidInput(message) from None
