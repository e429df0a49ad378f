"""Judged replies and false-positive marks move to the patterns app (SPEC §1).

Before the fields are dropped, every visit ops marked as a false positive, and
the last 1,000 completed visits with a reply, are copied into
``patterns.JudgedReply``, so marks, counts and draft trials keep working.
"""

from django.db import migrations
from django.urls import reverse

SAMPLE = 1000
KEEP = 10_000


def _kept(text: str) -> str:
    return text if len(text) <= 2 * KEEP else text[:KEEP] + text[-KEEP:]


def _decided_by(visit) -> str:
    if visit.status != "FAILED":
        return ""
    agent = ((visit.completion or {}).get("agentResult") or {})
    if agent.get("failed") or agent.get("completed") is False:
        return "agent"
    if visit.matched_pattern_name:
        return "pattern"
    if visit.final_text is not None and not visit.final_text.strip():
        return "blank"
    return "engine"


def copy_to_patterns(apps, schema_editor):
    Visit = apps.get_model("contextquery", "Visit")
    JudgedReply = apps.get_model("patterns", "JudgedReply")
    replied = Visit.objects.filter(final_text__isnull=False).exclude(status="RUNNING").select_related("run")
    chosen = {v.pk: v for v in replied.order_by("-ended_at", "-id")[:SAMPLE]}
    for visit in replied.filter(false_positive_at__isnull=False):
        chosen[visit.pk] = visit
    rows = []
    for visit in chosen.values():
        marked = visit.false_positive_at is not None
        rows.append(JudgedReply(
            subject=visit.visit_uuid,
            subject_url=reverse("contextquery:visit", args=[visit.run.run_id, visit.visit_uuid]),
            label=f"run {visit.run.run_id} · node {visit.node_id} #{visit.iter_seq}",
            text=_kept(visit.final_text),
            length=len(visit.final_text),
            failed=visit.status == "FAILED",
            decided_by=_decided_by(visit),
            pattern_id=visit.matched_pattern_id,
            pattern_name=visit.matched_pattern_name,
            category=visit.failure_category,
            judged_at=visit.ended_at or visit.started_at,
            mark="false_positive" if marked else "",
            mark_note=visit.false_positive_note if marked else "",
            marked_by_id=visit.false_positive_by_id if marked else None,
            marked_at=visit.false_positive_at,
        ))
    JudgedReply.objects.bulk_create(rows, batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ("contextquery", "0001_initial"),
        ("patterns", "0003_judged_reply"),
    ]

    operations = [
        migrations.RunPython(copy_to_patterns, migrations.RunPython.noop),
        migrations.RemoveField(model_name="visit", name="false_positive_at"),
        migrations.RemoveField(model_name="visit", name="false_positive_by"),
        migrations.RemoveField(model_name="visit", name="false_positive_note"),
    ]
