"""Migration 0020: on SQLite, CopyRender's large values (the stored frame, the reviews) sit at the
end of its row, after the small columns every item page reads (a column that follows a large value
is reached only through that value's overflow pages); its rows come through the rebuild whole.
PostgreSQL keeps large values out of line, and its table is left as it was."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from judging.models import CopyRender
from tests.judging.test_frame_rows import bundle
from tests.support.pure import runs_on_postgresql
from tests.worlds import a_run, a_session

LARGE = ["reviews", "frame_gzip"]


def columns() -> list[str]:
    with connection.cursor() as cursor:
        return [column.name for column in connection.introspection.get_table_description(
            cursor, CopyRender._meta.db_table)]


def stored(session) -> dict:
    return {r.copy_id: (bytes(r.frame_gzip), r.reviews, r.style_hash, r.inputs_sha256,
                        r.line_count, r.prose, r.prose_height_wide, r.prose_height_narrow)
            for r in CopyRender.objects.filter(session=session)}


@pytest.mark.django_db(transaction=True)
def test_the_large_values_are_last_on_sqlite_and_the_rows_survive_the_rebuild(host):
    if runs_on_postgresql():
        pytest.skip("PostgreSQL keeps large values out of line; 0020 leaves its table as it is "
                    "(runs in the embedded-default run)")
    session = a_session(a_run(host, bundle()), "open", rubric="Judge it.")
    before = stored(session)
    assert len(before) == 3
    assert columns()[-2:] == LARGE

    executor = MigrationExecutor(connection)
    executor.migrate([("judging", "0019_pairs")])
    # Positive control: the table as 0019's model builds it (its reverse leaves the table be)
    # has the frame before the columns an item page reads, and the check sees it.
    at_0019 = executor.loader.project_state(("judging", "0019_pairs")).apps
    with connection.schema_editor() as editor:
        editor._remake_table(at_0019.get_model("judging", "CopyRender"))
    order = columns()
    assert order.index("frame_gzip") < order.index("line_count")
    assert stored(session) == before
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert columns()[-2:] == LARGE
    assert stored(session) == before
