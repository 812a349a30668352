"""docs/threats.md case 15: wrong guest codes counted in a store every server process shares.

Another OS process makes the wrong attempts against the same database; this process then finds
the address blocked. Per-process memory would let each process count from zero.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from django.test import override_settings

from blindjudge.errors import Refused
from judging.services import GUEST_REFUSAL, guest_join, guests_configure

ROOT = Path(__file__).resolve().parents[2]  # the repository

WRONG_ATTEMPTS = """
from judging.services import guest_join
from blindjudge.errors import Refused
for _ in range(3):
    try:
        guest_join(code="WRNG-WRNG-WRNG-W", display_name="Guesser", client_address="203.0.113.7")
    except Refused:
        pass
print("done")
"""


@pytest.mark.django_db(transaction=True)
@override_settings(BLINDJUDGE_GUEST_ATTEMPTS=3)
def test_wrong_attempts_in_another_process_block_this_one(open_session):
    code = guests_configure(session=open_session, actor="test", allow=True).guest_code
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "blindjudge.settings_test",
           "BLINDJUDGE_TEST_DATABASE_NAME": connection.settings_dict["NAME"],
           "BLINDJUDGE_GUEST_ATTEMPTS": "3"}
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", WRONG_ATTEMPTS],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("done")
    with pytest.raises(Refused) as error:
        guest_join(code=code, display_name="Guesser", client_address="203.0.113.7")
    assert error.value.message == GUEST_REFUSAL
    # The right code still works from an address that did not guess.
    assert guest_join(code=code, display_name="Friend", client_address="203.0.113.8").judge
