"""system/bulk.py: many rows updated with a value each, as Django's bulk_update would."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knowledge.models import Entity, EntityType
from system.bulk import update_rows
from workspaces.actions.workspaces import do_create_workspace

FIELDS = ["mention_count", "source_ids", "first_seen_at", "description", "type_votes"]


def _entities(slug: str, n: int) -> list[Entity]:
    workspace = do_create_workspace(slug=slug)
    concept = EntityType.objects.create(workspace=workspace, name="concept")
    return [
        Entity.objects.create(
            workspace=workspace, name=f"n{i}", canonical_name=f"n{i}", type=concept
        )
        for i in range(n)
    ]


def _change(entities: list[Entity]) -> None:
    """Values of every kind a refresh writes: ints, arrays (empty too), NULL, quotes and
    non-ASCII text, nested JSON."""
    for i, entity in enumerate(entities):
        entity.mention_count = i * 7
        entity.source_ids = list(range(i % 3))
        entity.first_seen_at = None if i % 2 else datetime(2026, 1, 1 + i % 28, tzinfo=UTC)
        entity.description = f'It\'s "{i}" — naïve; DROP TABLE x; -- {"é" * i}'
        entity.type_votes = {"concept": i, "it's": {"nested": [i, None]}}


def _rows(entities: list[Entity]) -> list[tuple]:
    return list(
        Entity.objects.filter(pk__in=[e.pk for e in entities]).order_by("pk").values_list(*FIELDS)
    )


@pytest.mark.django_db
def test_rows_get_the_same_values_as_bulk_update_gives_them():
    ours, django = _entities("ours", 7), _entities("django", 7)
    untouched = _entities("untouched", 2)
    before = _rows(untouched)
    _change(ours)
    _change(django)
    assert update_rows(ours, FIELDS, batch_size=3) == 7  # three batches, one short
    Entity.objects.bulk_update(django, FIELDS, batch_size=3)
    assert _rows(ours) == _rows(django)
    assert _rows(ours)[4] == (28, [0], datetime(2026, 1, 5, tzinfo=UTC), ours[4].description,
                              ours[4].type_votes)  # fmt: skip
    assert _rows(ours)[3][1:3] == ([], None)
    assert _rows(untouched) == before


@pytest.mark.django_db
def test_nothing_to_write_writes_nothing():
    assert update_rows([], FIELDS) == 0
    assert update_rows(_entities("none", 1), []) == 0
