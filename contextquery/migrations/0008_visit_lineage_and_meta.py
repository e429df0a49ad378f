"""Visits keep their hop kinds, ancestor bits and meta content (issue 14).

Existing visits get their hop kinds and ancestor bits computed here, run by
run in registration order, so the context queries' one-lookup scope holds for
them too. ``meta_content`` stays null for them: the meta query reads their
logs instead, and the next log batch rebuilds it.
"""

from django.db import migrations, models

from contextquery.paths import Canvas, ancestry_of, hop_kind

BATCH = 500


def lineage_fill(apps, schema_editor):
    WorkflowRun = apps.get_model("contextquery", "WorkflowRun")
    Visit = apps.get_model("contextquery", "Visit")
    for run in WorkflowRun.objects.filter(visit_counter__gt=0).only("id", "graph").iterator(chunk_size=100):
        canvas = Canvas(run.graph)
        known: dict[str, tuple[str, int, bytes]] = {}
        changed = []
        for visit in Visit.objects.filter(run_id=run.id).order_by("sort_order").only(
            "id", "visit_uuid", "node_id", "sort_order", "parent_uuids"
        ):
            parents = [known[str(p)] for p in visit.parent_uuids or () if str(p) in known]
            visit.hop_kinds = [hop_kind(parent_node=node, child_node=visit.node_id, canvas=canvas) for node, _, _ in parents]
            visit.ancestry = ancestry_of((order, bits) for _, order, bits in parents)
            known[str(visit.visit_uuid)] = (visit.node_id, visit.sort_order, visit.ancestry)
            changed.append(visit)
        for start in range(0, len(changed), BATCH):
            Visit.objects.bulk_update(changed[start : start + BATCH], ["hop_kinds", "ancestry"])


class Migration(migrations.Migration):
    dependencies = [
        ("contextquery", "0007_tool_gateway"),
    ]

    operations = [
        migrations.AddField(
            model_name="visit",
            name="ancestry",
            field=models.BinaryField(blank=True, default=b""),
        ),
        migrations.AddField(
            model_name="visit",
            name="hop_kinds",
            field=models.JSONField(blank=True, default=list, editable=False),
        ),
        migrations.AddField(
            model_name="visit",
            name="meta_content",
            field=models.JSONField(blank=True, editable=False, null=True),
        ),
        migrations.RunPython(lineage_fill, migrations.RunPython.noop),
    ]
