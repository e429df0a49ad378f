"""Signs of life on visits and the tallies behind /metrics (SPEC §8).

Existing visits get their end (or start) as their last sign of life, so a
run that was silent before the upgrade is not taken for alive afterwards.
"""

import django.utils.timezone
from django.db import migrations, models
from django.db.models.functions import Coalesce


def last_seen_from_history(apps, schema_editor):
    Visit = apps.get_model("contextquery", "Visit")
    Visit.objects.update(last_seen_at=Coalesce("ended_at", "started_at"))


class Migration(migrations.Migration):
    dependencies = [
        ("contextquery", "0004_visit_log_count"),
    ]

    operations = [
        migrations.AddField(
            model_name="visit",
            name="last_seen_at",
            field=models.DateTimeField(null=True, verbose_name="last sign of life"),
        ),
        migrations.RunPython(last_seen_from_history, migrations.RunPython.noop, elidable=True),
        migrations.AlterField(
            model_name="visit",
            name="last_seen_at",
            field=models.DateTimeField(default=django.utils.timezone.now, verbose_name="last sign of life"),
        ),
        migrations.AddIndex(
            model_name="visit",
            index=models.Index(fields=["run", "last_seen_at"], name="visit_run_seen"),
        ),
        migrations.CreateModel(
            name="MetricTally",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100)),
                ("labels", models.CharField(default="[]", max_length=300)),
                ("value", models.FloatField(default=0)),
            ],
            options={
                "verbose_name": "metric tally",
                "verbose_name_plural": "metric tallies",
                "constraints": [
                    models.UniqueConstraint(fields=("name", "labels"), name="metrictally_unique_sample")
                ],
            },
        ),
    ]
