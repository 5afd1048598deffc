"""A chunk is indexed under its document's title and heading path (ingest/indexed_text.py).

`context` holds that line and the full-text index reads it before the text; the generated
column is rebuilt with it (every existing row keeps an empty context, so its index is what
it was until the chunk is embedded again). `embedding_recipe` records which indexed-text
recipe a vector was computed with: existing vectors have none (0), so `manage.py
backfill_embeddings` re-embeds them. Reversible: going back drops both fields and rebuilds
the index from the text alone.
"""

import django.contrib.postgres.indexes
import django.contrib.postgres.search
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0008_source_slices"),
    ]

    operations = [
        migrations.AddField(
            model_name="chunk",
            name="context",
            field=models.TextField(blank=True, default="", db_default=""),
        ),
        migrations.AddField(
            model_name="chunk",
            name="embedding_recipe",
            field=models.PositiveSmallIntegerField(default=0, db_default=0),
        ),
        # A generated column's expression cannot be altered in place: dropped with its
        # index and added again (the table is rewritten once).
        migrations.RemoveIndex(model_name="chunk", name="chunk_search_vector_gin"),
        migrations.RemoveField(model_name="chunk", name="search_vector"),
        migrations.AddField(
            model_name="chunk",
            name="search_vector",
            field=models.GeneratedField(
                db_persist=True,
                expression=django.contrib.postgres.search.SearchVector(
                    "context", "text", config="english"
                ),
                output_field=django.contrib.postgres.search.SearchVectorField(),
            ),
        ),
        migrations.AddIndex(
            model_name="chunk",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["search_vector"], name="chunk_search_vector_gin"
            ),
        ),
    ]
