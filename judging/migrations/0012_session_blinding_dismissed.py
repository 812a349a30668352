from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('judging', '0011_verdict_min_shown_ms'),
    ]

    operations = [
        migrations.AddField(
            model_name='session',
            name='blinding_dismissed',
            field=models.JSONField(default=list, help_text="Blinding-check matches the host kept on purpose (`import openai` in code), by decision key (content.blinding.decision_key); frozen with the protocol. A session opens only when every match is redacted or kept."),
        ),
        migrations.AlterField(
            model_name='session',
            name='verdict_min_shown_ms',
            field=models.PositiveSmallIntegerField(default=300, help_text="Frozen with the protocol: a verdict key (or click) counts only once the item's copy has been shown this long (milliseconds); earlier ones are dropped, never queued, so a held or bounced key cannot answer items the judge never saw. 0: no minimum; at most 5000."),
        ),
    ]
