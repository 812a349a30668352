"""CopyRender's large values (the stored frame, the reviews) moved to the end of its row.

SQLite stores a row's columns in table order and reaches a column that follows a large value only
by walking that value's overflow pages: every item page read the copy's line count and prose
heights, which followed the frame, so it paid for the frame's size (a 1 MB value: 0.3 ms a read
against 0.01; bench/README.md). On SQLite the table is rebuilt with the columns in the model's
order (the state's fields are moved first); PostgreSQL keeps large values out of line, so its
table is left as it is.
"""

from django.db import migrations, models


def large_values_last(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    # Django's own rebuild, as an AlterField does it on SQLite: a new table with the state
    # model's columns in its order, the rows copied, indexes and constraints made again.
    schema_editor._remake_table(apps.get_model("judging", "CopyRender"))


FRAME_GZIP = models.BinaryField(
    help_text="The standalone HTML document served in the sandbox, UTF-8, gzip-compressed "
    "(judging.renders.pack_frame); served as these bytes to every browser that accepts gzip.")
REVIEWS = models.JSONField(
    default=list, help_text="Per review of the copy, in reviewer order: review and reviewer "
    "ids, the verdict and the reason's HTML.")


class Migration(migrations.Migration):

    dependencies = [
        ("judging", "0019_pairs"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.RemoveField(model_name="copyrender", name="frame_gzip"),
            migrations.RemoveField(model_name="copyrender", name="reviews"),
            migrations.AddField(model_name="copyrender", name="reviews", field=REVIEWS),
            migrations.AddField(model_name="copyrender", name="frame_gzip", field=FRAME_GZIP),
        ]),
        migrations.RunPython(large_values_last, migrations.RunPython.noop),
    ]
