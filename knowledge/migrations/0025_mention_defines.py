"""Mention.defines: the mention's description is the name's own definition (a glossary or
API entry's, as the offline extractor reads them), so an entity's description puts its
definitions first (knowledge/actions/evidence.py, FRAGMENT_ORDER). A default in the
database: adding the column rewrites no row of the busiest table, and rows written before
read as "not a definition"."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0024_candidates_by_rarest_key"),
    ]

    operations = [
        migrations.AddField(
            model_name="mention",
            name="defines",
            field=models.BooleanField(db_default=False, default=False),
        ),
    ]
