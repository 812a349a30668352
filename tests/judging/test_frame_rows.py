"""A copy render's rows (issue 16, item 2): stored at opening beside the frame, equal to the rows the
frame shows; offered to the judge's item page as `frame_lines` / `frame_text_lines`; filled by
migration 0008 for renders stored before it."""

import gzip
import re

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from content.normalise import normalise
from content.rendering import FRAME_STYLE_HASH, frame_body, frame_document
from judging.models import CopyRender, Session
from judging.selectors.judge import judge_item
from tests.content.test_frame_views import rendered_rows
from tests.worlds import a_run, a_session, codes, invite_and_join, make_bundle

PYTHON_DIFF = ("diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def f():\n"
               "-    return 1\n+    return 2\n"
               "diff --git a/b.py b/b.py\n--- a/b.py\n+++ b/b.py\n@@ -0,0 +1 @@\n+import os\n")


def bundle() -> dict:
    return make_bundle(copies=[
        {"id": "c1", "builder": "b1", "format": "text", "content": "one\ntwo\nthree\n",
         "truth": "known_good"},
        {"id": "c2", "builder": "b2", "format": "diff", "content": PYTHON_DIFF,
         "truth": "known_good"},
        {"id": "c3", "builder": "b3", "format": "markdown",
         "content": "# Title\n\n    code outside a fence\n\n```python\nx = 1\n```\n",
         "truth": "known_good"},
    ], reviews=[], findings=[])


@pytest.mark.django_db
def test_opening_stores_each_frames_row_count_equal_to_the_rows_it_shows(host):
    session = a_session(a_run(host, bundle()), "open", rubric="Judge it.")
    stored = {r.copy.bundle_id: r for r in CopyRender.objects.filter(session=session)
              .select_related("copy")}

    for bundle_id, render in stored.items():
        body = frame_body(normalise(render.copy.content, render.copy.format, []),
                          render.copy.format)
        assert render.frame == frame_document(body.html)
        assert (render.line_count, render.prose) == (body.line_count, body.prose)
        assert render.line_count == rendered_rows(body), bundle_id
    assert stored["c1"].line_count == 3 and not stored["c1"].prose
    # Two list entries, the two files' four header lines each... every line of the diff.
    assert stored["c2"].line_count == 2 + len(PYTHON_DIFF.splitlines())
    assert stored["c3"].prose and stored["c3"].line_count == 7


@pytest.mark.django_db
def test_the_item_view_offers_the_rows_for_sizing_the_frame(host):
    session = a_session(a_run(host, bundle()), "open")
    judge = invite_and_join(session, "Sizer").judge
    seen = {}
    for code in codes(judge):
        item = judge_item(judge, code)
        render = CopyRender.objects.get(session=session,
                                        copy=judge.assignments.get(code=code).item.copy)
        seen[render.copy.bundle_id] = (item.frame_lines, item.frame_text_lines, render.line_count)
    assert seen["c1"] == (3, None, 3)
    assert seen["c2"][0] == seen["c2"][2] and seen["c2"][1] is None
    # Markdown opens on its rendered view (prose: no line count); #text has the rows.
    assert seen["c3"] == (None, 7, 7)


@pytest.mark.django_db(transaction=True)
def test_migration_0008_counts_frames_of_todays_style_and_leaves_older_frames_uncounted(host):
    session = a_session(a_run(host, bundle()), "open")
    renders = {r.copy.bundle_id: r for r in CopyRender.objects.filter(session=session)
               .select_related("copy")}
    expected = {bundle_id: (r.line_count, r.prose) for bundle_id, r in renders.items()}

    executor = MigrationExecutor(connection)
    executor.migrate([("judging", "0007_content_seal")])
    # Two renders as an older renderer stored them: a text frame (one <pre>) and a rendered
    # markdown one, with their style's hash.
    old_text = ('<!doctype html><html lang="en"><head><meta charset="utf-8"><style>x</style></head>'
                '<body><pre class="text">one\ntwo\nthree\n</pre></body></html>')
    old_markdown = old_text.replace('<pre class="text">one\ntwo\nthree\n</pre>',
                                    '<div class="md"><h1>Title</h1></div>')
    for bundle_id, document in (("c1", old_text), ("c3", old_markdown)):
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {connection.ops.quote_name(CopyRender._meta.db_table)} "
                "SET style_hash = %s, frame_gzip = %s WHERE id = %s",
                ["sha256-older", gzip.compress(document.encode("utf-8")), renders[bundle_id].pk])
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    after = {r.copy.bundle_id: r for r in CopyRender.objects.filter(session=session)
             .select_related("copy")}
    # Today's frame: counted by rendering its copy again, the same count the opening stored.
    assert after["c2"].style_hash == FRAME_STYLE_HASH
    assert (after["c2"].line_count, after["c2"].prose) == expected["c2"]
    # Older frames keep their bytes; their lines are not FRAME_LINE_PX high, so no count.
    assert (after["c1"].line_count, after["c1"].prose) == (None, False)
    assert (after["c3"].line_count, after["c3"].prose) == (None, True)
    assert after["c1"].frame == old_text
    judge = invite_and_join(Session.objects.get(pk=session.pk), "After").judge
    views = {}
    for code in codes(judge):
        copy = judge.assignments.get(code=code).item.copy
        item = judge_item(judge, code)
        views[copy.bundle_id] = (item.frame_lines, item.frame_text_lines)
    assert views["c1"] == (None, None) and views["c3"] == (None, None)
    assert views["c2"] == (expected["c2"][0], None)
    assert re.match(r"sha256-", after["c2"].style_hash)


@pytest.mark.django_db
def test_opening_stores_a_markdown_frames_estimated_heights_and_the_item_view_offers_them(host):
    """Issue 24, item 4: a rendered markdown frame is sized from heights estimated at opening (at
    the prose's full measure and at a phone's), stored with the render, never made on request."""
    session = a_session(a_run(host, bundle()), "open")
    stored = {r.copy.bundle_id: r for r in CopyRender.objects.filter(session=session)
              .select_related("copy")}
    markdown = stored["c3"]
    body = frame_body(normalise(markdown.copy.content, "markdown", []), "markdown")
    assert (markdown.prose_height_wide, markdown.prose_height_narrow) == body.prose_heights
    assert 0 < markdown.prose_height_wide <= markdown.prose_height_narrow
    assert all((stored[c].prose_height_wide, stored[c].prose_height_narrow) == (None, None)
               for c in ("c1", "c2"))

    judge = invite_and_join(session, "Sizer").judge
    offered = {judge.assignments.get(code=code).item.copy.bundle_id: judge_item(judge, code)
               .frame_prose_px for code in codes(judge)}
    assert offered == {"c1": None, "c2": None,
                       "c3": (markdown.prose_height_wide, markdown.prose_height_narrow)}
