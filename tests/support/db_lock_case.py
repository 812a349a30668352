"""A test that needs the database, run by tests/test_db_lock.py in a pytest of its own (not
collected by the suite: its name is not test_*.py)."""

import pytest


@pytest.mark.django_db
def test_that_needs_the_database():
    from judging.models import Run  # noqa: PLC0415

    assert Run.objects.count() == 0
