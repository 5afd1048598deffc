"""Saved layouts of the explorer's views: the one read (`get_saved_layout`) and the two
writes (`do_save_layout`, `do_delete_layout`) behind `layout_api`.

A layout is presentation, not knowledge: nothing is recorded in the curation history, but
it is shared by everyone who opens the view, so saving or forgetting one takes the editor
role (checked by the API, like every other write). What is saved is bounded and checked
here, whoever calls: equally long lists, finite coordinates within MAX_COORDINATE, at most
MAX_LAYOUT_NODES nodes, each node once, a view key of at most MAX_VIEW_KEY printable
characters. Ids that are not active entities of the workspace (another workspace's,
merged or deleted ones) are dropped: a layout never names what the workspace does not
show. Ids must be positive: the community map's ghost nodes (negative ids, neighbouring
communities that exist only in the page) are never saved.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from explorer.models import MAX_COORDINATE, MAX_LAYOUT_NODES, MAX_VIEW_KEY, SavedLayout
from knowledge.models import Entity, EntityState
from workspaces.errors import InvalidInput
from workspaces.models import MAX_ID, Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@dataclass(frozen=True)
class Layout:
    view: str
    nodes: list[int]
    x: list[float]
    y: list[float]
    saved_at: datetime | None  # None: nothing is saved for the view

    @property
    def count(self) -> int:
        return len(self.nodes)


def get_saved_layout(workspace: Workspace, view: str) -> Layout:
    """The layout saved for `view`, or an empty one (no nodes, `saved_at` None): a view
    nobody saved is the usual case, not an error, and the page asks on every load."""
    check_view_key(view)
    saved = SavedLayout.objects.for_workspace(workspace).filter(view_key=view).first()
    if saved is None:
        return Layout(view=view, nodes=[], x=[], y=[], saved_at=None)
    nodes, xs, ys = saved.unpack()
    return Layout(view=saved.view_key, nodes=nodes, x=xs, y=ys, saved_at=saved.saved_at)


def do_save_layout(
    *,
    workspace: Workspace,
    view: str,
    nodes: list[int],
    x: list[float],
    y: list[float],
    user: User | None = None,
) -> Layout:
    """Save (or replace) the layout of `view`, rounded to hundredths. Returns what was
    stored: the nodes that were kept (active entities of the workspace), in the order
    given."""
    check_view_key(view)
    _check_positions(nodes, x, y)
    kept = _kept_indices(workspace, nodes)
    nodes = [nodes[i] for i in kept]
    xs = [round(x[i], 2) for i in kept]
    ys = [round(y[i], 2) for i in kept]
    node_ids, coordinates = SavedLayout.pack(nodes, xs, ys)
    saved_at = timezone.now()
    with transaction.atomic():
        SavedLayout.objects.update_or_create(
            workspace=workspace,
            view_key=view,
            defaults={
                "node_ids": node_ids,
                "coordinates": coordinates,
                "node_count": len(nodes),
                "saved_at": saved_at,
                "saved_by": user,
            },
        )
    return Layout(view=view, nodes=nodes, x=xs, y=ys, saved_at=saved_at)


def do_delete_layout(*, workspace: Workspace, view: str) -> bool:
    """Forget the layout of `view` (the page lays the view out afresh). True when there
    was one; deleting what is not there is not an error."""
    check_view_key(view)
    with transaction.atomic():
        deleted, _ = SavedLayout.objects.for_workspace(workspace).filter(view_key=view).delete()
    return bool(deleted)


def check_view_key(view: str) -> None:
    if not view:
        raise InvalidInput("The view key is empty.")
    if len(view) > MAX_VIEW_KEY:
        raise InvalidInput(f"The view key is longer than {MAX_VIEW_KEY} characters.")
    if not view.isprintable():
        raise InvalidInput("The view key contains control characters.")


def _check_positions(nodes: list[int], x: list[float], y: list[float]) -> None:
    if not len(nodes) == len(x) == len(y):
        raise InvalidInput(
            f"nodes, x and y must be equally long (got {len(nodes)}, {len(x)} and {len(y)})."
        )
    if len(nodes) > MAX_LAYOUT_NODES:
        raise InvalidInput(
            f"A layout holds at most {MAX_LAYOUT_NODES:,} nodes (got {len(nodes):,})."
        )
    if any(node <= 0 or node > MAX_ID for node in nodes):
        raise InvalidInput("Node ids must be positive entity ids (ghost nodes are not saved).")
    if len(set(nodes)) != len(nodes):
        raise InvalidInput("A node is listed more than once.")
    for values in (x, y):
        if not all(math.isfinite(v) for v in values):
            raise InvalidInput("Coordinates must be finite numbers (no NaN or Infinity).")
        if any(abs(v) > MAX_COORDINATE for v in values):
            raise InvalidInput(f"Coordinates must lie within ±{MAX_COORDINATE:,.0f}.")


def _kept_indices(workspace: Workspace, nodes: list[int]) -> list[int]:
    """Positions in `nodes` of the workspace's active entities (looked up in batches: one
    query of 100,000 ids would be a statement of a megabyte)."""
    active: set[int] = set()
    entities = Entity.objects.for_workspace(workspace).filter(state=EntityState.ACTIVE)
    for start in range(0, len(nodes), _LOOKUP_BATCH):
        batch = nodes[start : start + _LOOKUP_BATCH]
        active.update(entities.filter(pk__in=batch).values_list("pk", flat=True))
    return [i for i, node in enumerate(nodes) if node in active]


_LOOKUP_BATCH = 10_000
