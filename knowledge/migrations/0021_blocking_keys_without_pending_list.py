"""The blocking-key GIN index without its pending list (`fastupdate = off`).

Consolidation writes a window's new entities and reads this index for the next window's
names a moment later, and every mention's refresh rewrites the entity rows (their counts
are in other indexes, so the updates are not HOT and add index entries). With fastupdate,
those entries wait in the GIN pending list until a vacuum or 4 MB of them, and every
lookup reads the whole list: measured on the Python manual's first 12 pages
(bench/doc_quality.py speed), 200–480 ms per window's candidate query, ~450 buffers read per
key, against ~2 ms once the list was merged. Inserting straight into the tree costs a
little more per write and keeps every lookup at the tree's cost.

The index keeps its definition; only its storage parameter changes (no rebuild), and the
list already pending is merged now.
"""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
from django.db import migrations, models

INDEX = "entity_scoped_blocking_keys"
FUNCTION = (
    "knowledge_blocking_candidates(bigint, integer[], bigint[], text[], bigint, integer, integer)"
)


def _index(*, fastupdate: bool | None) -> django.contrib.postgres.indexes.GinIndex:
    return django.contrib.postgres.indexes.GinIndex(
        models.Func(
            models.F("type_id"),
            models.F("blocking_keys"),
            function="knowledge_scoped_keys",
            output_field=django.contrib.postgres.fields.ArrayField(base_field=models.TextField()),
        ),
        condition=models.Q(("state", "active")),
        name=INDEX,
        fastupdate=fastupdate,
    )


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0020_blocking_candidates_function")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    sql=(
                        f"ALTER INDEX {INDEX} SET (fastupdate = off);"
                        f"SELECT gin_clean_pending_list('{INDEX}'::regclass);"
                    ),
                    reverse_sql=f"ALTER INDEX {INDEX} RESET (fastupdate);",
                ),
                migrations.RunSQL(
                    sql=f"ALTER FUNCTION {FUNCTION} SET plan_cache_mode = force_custom_plan;",
                    reverse_sql=f"ALTER FUNCTION {FUNCTION} RESET plan_cache_mode;",
                ),
            ],
            state_operations=[
                migrations.RemoveIndex(model_name="entity", name=INDEX),
                migrations.AddIndex(model_name="entity", index=_index(fastupdate=False)),
            ],
        )
    ]
