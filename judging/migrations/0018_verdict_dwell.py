from django.db import migrations, models

from judging import immutability


def reinstall(apps, schema_editor):
    # Two nullable columns are added with ALTER TABLE ADD COLUMN, which keeps the triggers on
    # judging_verdict; should a backend remake the table instead (SQLite does for some column
    # changes), the triggers would be gone without a word. Installing them again is idempotent
    # (CREATE TRIGGER IF NOT EXISTS on SQLite, DROP and CREATE on PostgreSQL), so locked verdicts
    # stay immutable either way (tests/judging/test_database_guarantees.py).
    immutability.install(schema_editor.connection, ("judging_verdict",))


class Migration(migrations.Migration):

    dependencies = [
        ('judging', '0017_reasons'),
    ]

    operations = [
        # Taken back, the columns are dropped first; then the triggers are installed again.
        migrations.RunPython(migrations.RunPython.noop, reinstall),
        migrations.AddField(
            model_name='verdict',
            name='answered_at',
            field=models.DateTimeField(blank=True, help_text="When the server stored the verdict's current answer: the save that created the verdict or last changed its value (or keep). A save of the reason or the time alone leaves it. Null for verdicts saved before it was recorded.", null=True),
        ),
        migrations.AddField(
            model_name='verdict',
            name='server_seconds',
            field=models.FloatField(blank=True, help_text="Seconds between the save that gave the verdict its current answer and the judge's previous answer save in the same phase (of any of their items, this one included), measured by the server's clock, not the page's. An answer save creates a verdict or changes its value (or keep); saves of a reason or the time alone are not counted. Null for the judge's first answer of the phase. Saves retried after a lost connection arrive together, with short intervals.", null=True),
        ),
        migrations.RunPython(reinstall, migrations.RunPython.noop),
    ]
