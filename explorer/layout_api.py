"""The explorer's saved layouts in the JSON API: `…/workspaces/{slug}/layouts?view=<key>`
answers (GET), saves (PUT) and forgets (DELETE) where the nodes of one view were drawn.

Every member may read a layout; saving or forgetting one takes the editor role, like every
other write (a saved layout is what everyone opening the view sees). The view key is the
page's canonical form of the URL state that decides which nodes are loaded
(static/js/graph/layouts.js); the server treats it as an opaque string.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema, Status
from pydantic import StrictInt

from explorer.layouts import Layout, do_delete_layout, do_save_layout, get_saved_layout
from explorer.models import MAX_COORDINATE, MAX_LAYOUT_NODES, MAX_VIEW_KEY
from workspaces.auth import get_workspace_access
from workspaces.models import Role

router = Router(tags=["explorer"])

ViewKey = Annotated[
    str,
    Query(
        description=f"the view's key (at most {MAX_VIEW_KEY} characters): the page's canonical "
        "form of the URL state that decides which nodes are loaded"
    ),
]


class LayoutIn(Schema):
    nodes: list[StrictInt] = Field(
        ...,
        description=f"entity ids, at most {MAX_LAYOUT_NODES:,}, each once (ids that are not "
        "active entities of this workspace are dropped)",
    )
    x: list[float] = Field(
        ..., description=f"x of each node, finite, within ±{MAX_COORDINATE:,.0f}"
    )
    y: list[float] = Field(
        ..., description=f"y of each node, finite, within ±{MAX_COORDINATE:,.0f}"
    )


class LayoutSavedOut(Schema):
    view: str
    saved_at: datetime | None = Field(..., description="null when no layout is saved")
    count: int = Field(..., description="nodes stored (after dropping unknown entity ids)")


class LayoutOut(LayoutSavedOut):
    nodes: list[int]
    x: list[float] = Field(..., description="rounded to hundredths")
    y: list[float] = Field(..., description="rounded to hundredths")


@router.get(
    "/workspaces/{slug}/layouts",
    response=LayoutOut,
    summary="The saved layout of an explorer view",
)
def get_layout(request: HttpRequest, slug: str, view: ViewKey) -> dict[str, Any]:
    """Node ids with their x and y, as saved (hundredths). A view nobody saved answers
    empty lists, count 0 and saved_at null."""
    workspace = get_workspace_access(request, slug).workspace
    return _out(get_saved_layout(workspace, view), positions=True)


@router.put(
    "/workspaces/{slug}/layouts",
    response=LayoutSavedOut,
    summary="Save the layout of an explorer view",
)
def save_layout(request: HttpRequest, slug: str, view: ViewKey, body: LayoutIn) -> dict[str, Any]:
    """Replaces the view's layout (editors). Coordinates are rounded to hundredths; ids
    that are not active entities of this workspace are dropped. 422 for lists of
    different lengths, a repeated, zero or negative id, non-finite or out-of-range
    coordinates, more than 100,000 nodes, or a view key longer than 500 characters; 413
    for a body over 5 MB."""
    membership = get_workspace_access(request, slug, role=Role.EDITOR)
    layout = do_save_layout(
        workspace=membership.workspace,
        view=view,
        nodes=body.nodes,
        x=body.x,
        y=body.y,
        user=membership.user,
    )
    return _out(layout, positions=False)


@router.delete(
    "/workspaces/{slug}/layouts",
    response={204: None},
    summary="Forget the layout of an explorer view",
)
def delete_layout(request: HttpRequest, slug: str, view: ViewKey) -> Status[None]:
    """The view is laid out afresh the next time it is opened (editors). 204 whether or
    not a layout was saved."""
    membership = get_workspace_access(request, slug, role=Role.EDITOR)
    do_delete_layout(workspace=membership.workspace, view=view)
    return Status(204, None)


def _out(layout: Layout, *, positions: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"view": layout.view, "saved_at": layout.saved_at, "count": layout.count}
    if positions:
        out |= {"nodes": layout.nodes, "x": layout.x, "y": layout.y}
    return out
