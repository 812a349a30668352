"""A session's draw seed is never stored in a text judges (or the public) can read (issue 25).

`--draw-seed` derives every judge's order seed and salt: whoever holds it and the bundle's ids
knows each code's builder before the reveal. A rubric, instructions, preregistration or amendment
holding it is refused, by the command, the draft's pages and the amendment page alike, whatever
its case and however its digits are split.
"""

import io

import pytest
from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError
from django.urls import reverse

from judging.models import PreregAmendment, Session
from judging.services import session_create
from tests.worlds import advance, client_as

SEED = "5eed" + "0123456789abcdef" * 3 + "c0ffee42d00d"
assert len(SEED) == 64
SPLIT = " ".join(SEED[i:i + 8].upper() for i in range(0, 64, 8))  # as a host might paste it
REFUSED = "holds the session&#x27;s draw seed"


@pytest.fixture
def seeded(run):
    return session_create(run=run, kind="copies", actor="test", draw_seed=SEED,
                          rubric="Is add() right?").session


def url(name, session):
    return reverse(f"host:{name}", kwargs={"session_id": session.pk})


@pytest.mark.django_db
@pytest.mark.parametrize("field", ["rubric", "preregistration"])
def test_the_draft_page_refuses_a_text_holding_the_draw_seed(host, seeded, field):
    alice = client_as(host)
    data = {"draft-rubric": "Is add() right?", "draft-preregistration": "",
            "draft-reviewer_display": "letters", "draft-advance_on_key": "on"}
    data[f"draft-{field}"] = f"Pinned for the audit:\n{SPLIT}\n"
    refused = alice.post(url("session_edit", seeded), data)
    assert refused.status_code == 400
    assert f"{field}: {REFUSED}" in refused.content.decode()
    seeded.refresh_from_db()
    assert (seeded.rubric, seeded.preregistration) == ("Is add() right?", "")
    # The same text without the seed is saved.
    data[f"draft-{field}"] = "Pinned for the audit."
    assert alice.post(url("session_edit", seeded), data).status_code == 303


@pytest.mark.django_db
def test_the_instructions_page_refuses_the_draw_seed(host, seeded):
    alice = client_as(host)
    refused = alice.post(url("instructions", seeded), {
        "instructions": f"Order seed: `{SEED.upper()}`", "minutes_per_item": 4, "action": "save"})
    assert refused.status_code == 400
    assert f"instructions: {REFUSED}" in refused.content.decode()
    seeded.refresh_from_db()
    assert seeded.instructions == ""


@pytest.mark.django_db
def test_the_amendment_page_refuses_the_draw_seed(host, seeded):
    advance(seeded, "open")
    refused = client_as(host).post(url("prereg_amend", seeded),
                                   {"amend-text": f"For replication: {SEED}"})
    assert refused.status_code == 400
    assert f"amendment: {REFUSED}" in refused.content.decode()
    assert not PreregAmendment.objects.exists()


@pytest.mark.django_db
def test_create_session_refuses_a_preregistration_holding_its_draw_seed(run, tmp_path):
    prereg = tmp_path / "prereg.md"
    prereg.write_text(f"We expect herding.\n\nSeed: {SPLIT}\n", encoding="utf-8")
    with pytest.raises(CommandError) as raised:
        call_command("create_session", str(run.pk), "--kind", "copies", "--prereg", str(prereg),
                     "--draw-seed", SEED, stdout=io.StringIO())
    assert str(raised.value).startswith("preregistration: holds the session's draw seed.")
    assert not Session.objects.exists()
    # Another seed in the text is nothing to refuse (only this session's tells its codes).
    call_command("create_session", str(run.pk), "--kind", "copies", "--prereg", str(prereg),
                 "--draw-seed", "ab" * 32, stdout=io.StringIO())
    assert Session.objects.count() == 1
    # The option says what the seed gives away.
    parser = load_command_class("host", "create_session").create_parser("manage.py",
                                                                           "create_session")
    assert "knows each code's builder before the reveal" in " ".join(parser.format_help().split())
