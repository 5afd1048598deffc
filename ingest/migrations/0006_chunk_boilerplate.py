# Boilerplate: text repeated across the documents of one source (navigation, footers,
# cookie banners). Chunk.boilerplate marks chunks made only of such text (kept for offsets
# and counts; skipped by extraction and search); DocumentBlock records which paragraph
# fingerprints each document holds, so a source knows what repeats (ingest/boilerplate.py).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0005_chunk_created_index"),
        ("workspaces", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="chunk",
            name="boilerplate",
            field=models.BooleanField(default=False),
        ),
        migrations.CreateModel(
            name="DocumentBlock",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("fingerprint", models.CharField(max_length=64)),
                ("repeated", models.BooleanField(default=False)),
                (
                    "document",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="blocks",
                        to="ingest.document",
                    ),
                ),
                (
                    "source",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="ingest.source",
                    ),
                ),
                (
                    "workspace",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="workspaces.workspace",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(fields=["source", "fingerprint"], name="docblock_source_fp")
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=["document", "fingerprint"], name="docblock_unique_fingerprint"
                    )
                ],
            },
        ),
    ]
