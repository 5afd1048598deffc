"""SectionLabelOverride: a person's word on a source's learnt section labels (a label that
is a subject after all, or one the counts missed), read when the source is extracted. A new
table only: reversible by dropping it."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0008_source_slices"),
        ("knowledge", "0025_mention_defines"),
        ("workspaces", "0002_workspace_deletion"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="SectionLabelOverride",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("label", models.CharField(max_length=200)),
                ("text", models.CharField(max_length=200)),
                ("structure", models.BooleanField()),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
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
                "ordering": ["source", "label"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("source", "label"), name="sectionlabel_unique_label"
                    )
                ],
            },
        ),
    ]
