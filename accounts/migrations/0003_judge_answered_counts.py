from django.db import migrations, models
from django.db.models import Count


def count_existing(apps, schema_editor):
    """Judges who joined before the counts existed get them from their verdicts."""
    Judge = apps.get_model("accounts", "Judge")
    Verdict = apps.get_model("judging", "Verdict")
    counts = (Verdict.objects.values("assignment__judge_id", "phase")
              .annotate(n=Count("id")).values_list("assignment__judge_id", "phase", "n"))
    for judge_id, phase, n in counts:
        Judge.objects.filter(pk=judge_id).update(**{f"phase{phase}_answered": n})


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0002_initial"),
        ("judging", "0002_immutability_triggers"),
    ]

    operations = [
        migrations.AddField(
            model_name="judge",
            name="phase1_answered",
            field=models.PositiveIntegerField(
                default=0, help_text="Items with a phase-1 verdict (a count, never a value)."),
        ),
        migrations.AddField(
            model_name="judge",
            name="phase2_answered",
            field=models.PositiveIntegerField(
                default=0, help_text="Items with a phase-2 verdict (a count, never a value)."),
        ),
        migrations.RunPython(count_existing, migrations.RunPython.noop),
    ]
