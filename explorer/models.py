"""What the explorer keeps of its own: saved layouts.

A layout is presentation, not knowledge: where the nodes of one view of a workspace were
drawn when the force layout settled, so that reopening the view (or a colleague opening
its URL) shows the same picture at once instead of simulating it again. Nothing in the
knowledge graph depends on it; editors save them (explorer/layouts.py), every member sees
them. Deleting a workspace deletes its layouts with its other rows (the sweep of every
model with a `workspace` foreign key, workspaces/actions/workspaces.py).
"""

from __future__ import annotations

from array import array

from django.conf import settings
from django.db import models

from workspaces.models import WorkspaceScopedModel

# The longest view key (the canonical query of the explorer's URL state, see
# static/js/graph/layouts.js; longer ones are hashed by the page).
MAX_VIEW_KEY = 500
# The most nodes one layout holds (the explorer loads at most 50,000 in one bulk load,
# plus what expansions add).
MAX_LAYOUT_NODES = 100_000
# Coordinates are kept in hundredths (the page rounds to 0.01 and then draws the rounded
# values, so a restored layout is exactly the saved one): |x|, |y| <= this, so that a
# hundredth fits in 32 bits with room to spare.
MAX_COORDINATE = 1_000_000.0


class SavedLayout(WorkspaceScopedModel):
    """One view's settled positions. Stored compactly, not as a row per node (a layout is
    always read and written whole): the entity ids as 64-bit integers and the coordinates
    as signed 32-bit hundredths, x and y interleaved, both little-endian: 16 bytes a node,
    so 100,000 nodes take 1.6 MB before PostgreSQL compresses them."""

    view_key = models.CharField(max_length=MAX_VIEW_KEY)
    node_ids = models.BinaryField()
    coordinates = models.BinaryField()
    node_count = models.PositiveIntegerField()
    saved_at = models.DateTimeField()
    saved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "view_key"], name="savedlayout_unique_view"
            )
        ]

    def __str__(self) -> str:
        return f"{self.view_key} ({self.node_count} nodes)"

    @staticmethod
    def pack(nodes: list[int], xs: list[float], ys: list[float]) -> tuple[bytes, bytes]:
        """(node_ids, coordinates) bytes of validated, equally long lists."""
        ids = array("q", nodes)
        hundredths = array("i")
        for x, y in zip(xs, ys, strict=True):
            hundredths.append(round(x * 100))
            hundredths.append(round(y * 100))
        return _little_endian(ids), _little_endian(hundredths)

    def unpack(self) -> tuple[list[int], list[float], list[float]]:
        """The node ids and their x and y (the hundredths back as numbers: 12.34, not
        12.340000152)."""
        ids = _from_little_endian("q", bytes(self.node_ids))
        hundredths = _from_little_endian("i", bytes(self.coordinates))
        return (
            ids.tolist(),
            [v / 100 for v in hundredths[0::2]],
            [v / 100 for v in hundredths[1::2]],
        )


def _little_endian(values: array) -> bytes:
    if not _LITTLE:
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _from_little_endian(typecode: str, data: bytes) -> array:
    values = array(typecode)
    values.frombytes(data)
    if not _LITTLE:
        values.byteswap()
    return values


_LITTLE = array("H", [1]).tobytes() == b"\x01\x00"
