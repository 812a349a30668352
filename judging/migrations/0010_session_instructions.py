"""The host's instructions to judges (issue 17 item 2): the text and a minutes-per-item estimate on
the session, frozen with the protocol at opening, and their render stored beside the rubric's.
Sessions opened before keep no instructions (blank) and the default estimate; their protocols and
render keys are unchanged (both name instructions only when there are some).
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('judging', '0009_judging_loop'),
    ]

    operations = [
        migrations.AddField(
            model_name='session',
            name='instructions',
            field=models.TextField(blank=True, help_text="The host's instructions to judges (markdown), frozen at opening and shown on the judge's instructions page beside what the product says itself."),
        ),
        migrations.AddField(
            model_name='session',
            name='minutes_per_item',
            field=models.PositiveSmallIntegerField(default=3, help_text="The host's estimate of a judge's minutes per item, for the time estimate on the instructions page."),
        ),
        migrations.AddField(
            model_name='sessionrender',
            name='instructions_html',
            field=models.TextField(blank=True, help_text="The host's instructions, normalised and rendered inert."),
        ),
    ]
