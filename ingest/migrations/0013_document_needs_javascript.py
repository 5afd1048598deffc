# Pages that need a browser (issue 41, item 4): the crawl's verdict on each HTML page and
# whether its stored HTML is Chromium's rendering.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0012_scheduled_recrawls"),
    ]

    operations = [
        migrations.AddField(
            model_name="document",
            name="needs_javascript",
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.AddField(
            model_name="document",
            name="rendered",
            field=models.BooleanField(db_default=False, default=False),
        ),
    ]
