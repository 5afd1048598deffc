"""Many rows updated with a value each, in one statement per batch.

Django's `QuerySet.bulk_update` writes `SET field = CASE WHEN id = 1 THEN ... WHEN id = 2
THEN ... END` for every field: each row's new value is found by trying the batch's WHEN
branches in turn, so a batch of n rows costs n² comparisons per field, and the statement's
text grows with it. Refreshing a window's derived entity fields (six fields, a few hundred
rows) spent most of its time there. `update_rows` joins the rows to a VALUES list instead:
one pass, the same rows and values, the same single statement per batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import batched

from django.db import connections, router
from django.db.models import Field, Model


def update_rows(objs: Sequence[Model], fields: Sequence[str], *, batch_size: int = 500) -> int:
    """Write `fields` of each of `objs` (instances of one model, saved already) to its row;
    returns how many rows were updated. Like `bulk_update`, without signals or `auto_now`."""
    if not objs or not fields:
        return 0
    model = type(objs[0])
    meta = model._meta
    connection = connections[router.db_for_write(model)]
    quote = connection.ops.quote_name
    columns = [_concrete(meta.pk), *(_concrete(meta.get_field(name)) for name in fields)]
    column_names = [quote(str(field.column)) for field in columns]
    casts = ", ".join(f"%s::{field.db_type(connection)}" for field in columns)
    names = ", ".join(column_names)
    assignments = ", ".join(f"{name} = v.{name}" for name in column_names[1:])
    key = column_names[0]
    updated = 0
    with connection.cursor() as cursor:
        for batch in batched(objs, batch_size):
            values = ", ".join([f"({casts})"] * len(batch))
            sql = (
                f"UPDATE {quote(meta.db_table)} AS t SET {assignments} "  # noqa: S608 (names from the model; values are parameters)
                f"FROM (VALUES {values}) AS v({names}) WHERE t.{key} = v.{key}"
            )
            params = [
                field.get_db_prep_save(getattr(obj, field.attname), connection)
                for obj in batch
                for field in columns
            ]
            cursor.execute(sql, params)
            updated += cursor.rowcount
    return updated


def _concrete(field: object) -> Field:
    """A column of the table (not a reverse relation or a generic foreign key)."""
    if not isinstance(field, Field) or not field.concrete:
        raise ValueError(f"{field!r} is not a column")
    return field
