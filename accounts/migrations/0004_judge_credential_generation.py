from django.db import migrations, models


class Migration(migrations.Migration):
    """Judges who joined before the generation existed start at 0, which is also what a browser
    session bound before it (holding the judge's id alone) counts as: those sessions stay admitted
    until the judge's next reissue or revocation."""

    dependencies = [
        ("accounts", "0003_judge_answered_counts"),
    ]

    operations = [
        migrations.AddField(
            model_name="judge",
            name="credential_generation",
            field=models.PositiveIntegerField(
                default=0, help_text="Bumped when the resume links are reissued or revoked: "
                                     "browser sessions opened before then are no longer admitted."),
        ),
    ]
