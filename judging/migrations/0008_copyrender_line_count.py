"""A copy render's rows (issue 16, item 2): `line_count`, the rows of the frame's non-wrapping view,
by which the judge's page sizes the frame; `prose`, the frame opens on rendered markdown.

Renders stored before keep their frames (judges of open sessions go on seeing what was frozen at
opening). A frame of today's style (one migration 0004 rendered just now, from the same inputs) is
counted by rendering its copy again with its session's redactions, which gives the same frame. An
older frame has no rows of FRAME_LINE_PX (one `<pre>` of 13 px x 1.45 lines, notes that wrap), so
no count could size it: its line_count stays null and its page keeps the fixed frame (the judge
selector offers no count); `prose` is set from its markup all the same.
"""

import gzip

from django.db import migrations, models

from content.rendering import FRAME_STYLE_HASH
from judging import renders


def count_rows(apps, schema_editor):
    CopyRender = apps.get_model("judging", "CopyRender")
    Copy = apps.get_model("judging", "Copy")
    Session = apps.get_model("judging", "Session")
    patterns_of = {}
    for pk, session_id, copy_id, style_hash in (CopyRender.objects.order_by("pk").values_list(
            "pk", "session_id", "copy_id", "style_hash").iterator()):
        if style_hash != FRAME_STYLE_HASH:
            stored = CopyRender.objects.filter(pk=pk).values_list("frame_gzip", flat=True)[0]
            body = gzip.decompress(bytes(stored)).decode("utf-8").split("<body>", 1)[-1]
            prose = '<div class="md">' in body and '<pre class="text">' not in body
            CopyRender.objects.filter(pk=pk).update(line_count=None, prose=prose)
            continue
        if session_id not in patterns_of:
            patterns_of[session_id] = Session.objects.filter(pk=session_id).values_list(
                "redaction_patterns", flat=True)[0]
        content, fmt = Copy.objects.filter(pk=copy_id).values_list("content", "format")[0]
        frame = renders.frame_render(content, fmt, patterns_of[session_id],
                                     backtracking_allowed=True)
        CopyRender.objects.filter(pk=pk).update(line_count=frame.line_count, prose=frame.prose)


class Migration(migrations.Migration):

    dependencies = [
        ("judging", "0007_content_seal"),
    ]

    operations = [
        migrations.AddField(
            model_name="copyrender",
            name="line_count",
            field=models.PositiveIntegerField(null=True, help_text="Rows of the frame's non-wrapping view (content.rendering.FrameBody): text or diff lines, file headers, file-list entries and notes; for markdown, its plain-text view's; each FRAME_LINE_PX high. Null for a frame stored before frames had rows (migration 0008), whose lines are not."),
        ),
        migrations.AddField(
            model_name="copyrender",
            name="prose",
            field=models.BooleanField(default=False, help_text="The frame opens on rendered markdown (wrapping prose, no line count); its plain-text view (#text) has line_count rows."),
        ),
        migrations.RunPython(count_rows, migrations.RunPython.noop),
    ]
