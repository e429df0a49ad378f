"""Add ``scope`` (SPEC §3.1, §3.3): rows that exist now match as before
(``anywhere``); new patterns default to ``error``. Keep the last set that
compiled with the version row."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("patterns", "0003_judged_reply"),
    ]

    operations = [
        migrations.AddField(
            model_name="hermeserrorpattern",
            name="scope",
            field=models.CharField(default="anywhere", max_length=16, verbose_name="scope"),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="hermeserrorpattern",
            name="scope",
            field=models.CharField(
                choices=[("error", "only where the reply is an error"), ("anywhere", "anywhere in the scanned text")],
                default="error",
                help_text=(
                    "error: the pattern counts only where the reply is an error (it starts as one, is one provider "
                    "sentence, or ends with an error block); anywhere: wherever its text occurs."
                ),
                max_length=16,
                verbose_name="scope",
            ),
        ),
        migrations.AddField(
            model_name="patternsetversion",
            name="compiled_version",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="patternsetversion",
            name="compiled_rules",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="patternsetversion",
            name="compile_error",
            field=models.TextField(blank=True, default=""),
        ),
    ]
