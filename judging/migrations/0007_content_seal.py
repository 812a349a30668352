"""The content seal check (issue 14 item 7): a review's seal may be verdict_in_content (keys sealed,
a verdict in the request's content), the matching text and the pattern's name are kept with the
review, and a run keeps every pattern the check applied at import.

Runs imported before keep their seals, as they were computed then (keys and hash only): their
requests are stored, but they are not re-scanned here. A report may already have been published and
verified for a revealed session of such a run, and its scores would change under it; and the
patterns of today would be judged as if they had been the run's at import. Their
Run.verdict_patterns stays null, which the report reads as "content not checked". Going back turns
verdict_in_content into sealed (the keys were sealed: the old meaning) and drops the new fields.
"""

from django.db import migrations, models


def verdict_in_content_back_to_sealed(apps, schema_editor):
    Review = apps.get_model("judging", "Review")
    Review.objects.filter(seal="verdict_in_content").update(seal="sealed")


class Migration(migrations.Migration):

    dependencies = [
        ("judging", "0006_session_by_task"),
    ]

    operations = [
        migrations.AlterField(
            model_name="review",
            name="seal",
            field=models.CharField(choices=[("sealed", "Sealed"), ("verdict_in_content", "Verdict In Content"), ("failed", "Failed"), ("absent", "Absent")], help_text="sealed: keys exact, hash matches, no verdict carried besides the copy; verdict_in_content: keys sealed, but the request carries a verdict outside the copy and the task statement; failed: anything else; absent: no request.", max_length=20),
        ),
        # Backwards only (operations run in reverse): before the column narrows again.
        migrations.RunPython(migrations.RunPython.noop, verdict_in_content_back_to_sealed),
        migrations.AddField(
            model_name="review",
            name="content_verdict",
            field=models.CharField(blank=True, default="", help_text="The text of a verdict the request carries outside the copy and the task statement (at most 200 characters); empty when none was found.", max_length=200),
        ),
        migrations.AddField(
            model_name="review",
            name="content_verdict_pattern",
            field=models.CharField(blank=True, default="", help_text="The name of the pattern that found content_verdict; empty when none.", max_length=100),
        ),
        migrations.AddField(
            model_name="run",
            name="verdict_patterns",
            field=models.JSONField(blank=True, default=None, help_text="Every pattern the content seal check applied at import, built-in and the host's: [{name, origin, pattern, description}]; null for a run imported before the check existed (its seals checked keys and hash only).", null=True),
        ),
    ]
