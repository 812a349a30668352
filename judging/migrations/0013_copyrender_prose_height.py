"""A markdown frame's estimated height (issue 24, item 4): `prose_height_wide` and
`prose_height_narrow`, made when a session opens (content.prose_height) and stored with the render,
by which the judge's page sizes the frame so the page scrolls through the whole copy.

Renders stored before keep null: their frames have neither the prose measure nor the focusable
body the estimate goes with, and their pages keep the box of fixed height they had.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("judging", "0012_session_blinding_dismissed"),
    ]

    operations = [
        migrations.AddField(
            model_name="copyrender",
            name="prose_height_wide",
            field=models.PositiveIntegerField(null=True, help_text="A prose frame's height in px, estimated at opening (content.prose_height) for prose PROSE_MEASURE_CH wide; with prose_height_narrow, the judge's page sizes the frame at its own width. Null for other frames and for frames stored before the estimate (migration 0013)."),
        ),
        migrations.AddField(
            model_name="copyrender",
            name="prose_height_narrow",
            field=models.PositiveIntegerField(null=True, help_text="The same estimate for prose PROSE_NARROW_CH wide (about a phone)."),
        ),
    ]
