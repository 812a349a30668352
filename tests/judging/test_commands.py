"""The host's command line (README.md "The host's command line"; docs/threats.md cases 7, 8, 31):
every host command through call_command, its plain and `--json` output, its refusals (a
CommandError with the service's message; with `--json` also {"ok": false, ...} on stdout), and a
few real processes to show commands never prompt and exit non-zero on bad input."""

import argparse
import copy
import hashlib
import io
import json
import os
import secrets
import sqlite3
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command, get_commands, load_command_class
from django.core.management.base import CommandError
from django.test import override_settings
from django.utils.html import escape

from accounts.enums import CredentialKind
from accounts.models import Credential, Host, Invitation, Judge
from blindjudge.errors import Refused
from judging.models import AuditEvent, Run, Session, TruthCorrection
from judging.selectors import judge as selectors
from judging.services import GUEST_REFUSAL, guest_join, join_token_exchange, session_open
from reports.build import build_report
from reports.export import CSV_COLUMNS, JSONL_COLUMNS, to_json
from reports.html import REPORT_META_CSP
from tests.support.verdicts import verdict_record
from tests.worlds import a_run, a_session, advance, answer_all, bundle_bytes, invite_and_join, make_bundle

ROOT = Path(__file__).resolve().parents[2]  # the repository
SITE = "http://127.0.0.1:8000"


def call(*args) -> str:
    """Run a command; return what it printed on stdout."""
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    assert err.getvalue() == ""
    return out.getvalue()


def call_json(*args) -> dict:
    payload = json.loads(call(*args, "--json"))
    assert payload.pop("ok") is True
    return payload


def refused(*args, error="invalid") -> str:
    """Run a command with --json that must fail; check the JSON it printed; return the message."""
    out = io.StringIO()
    with pytest.raises(CommandError) as raised:
        call_command(*args, "--json", stdout=out, stderr=io.StringIO())
    message = str(raised.value)
    assert json.loads(out.getvalue()) == {"ok": False, "error": error, "message": message}
    return message


def refused_plain(*args) -> str:
    """The same refusal without --json: nothing on stdout, the message in the CommandError."""
    out = io.StringIO()
    with pytest.raises(CommandError) as raised:
        call_command(*args, stdout=out, stderr=io.StringIO())
    assert out.getvalue() == ""
    return str(raised.value)


def write(tmp_path, name, data) -> str:
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return str(path)


def token_of(link: str) -> str:
    return urlsplit(link).path.rsplit("/", 1)[1]


@pytest.fixture
def session_id(open_session):
    return str(open_session.pk)


def revealed_with_one_judge(session):
    judge = invite_and_join(session, name="Zebediah Quux").judge
    answer_all(judge, 1, "fail", reason="=1+1", lock=True)
    return advance(session, "revealed")


# --- createhost ----------------------------------------------------------------------------------

def test_createhost_prints_a_generated_password_that_signs_in(db):
    lines = call("createhost", "carol").splitlines()
    assert lines[:2] == ["host: carol", f"sign_in: {SITE}/accounts/login/"]
    assert lines[2].startswith("password: ") and len(lines) == 3
    password = lines[2].removeprefix("password: ")
    assert len(password) >= 20
    user = get_user_model().objects.get(username="carol")
    assert user.check_password(password) and Host.objects.filter(user=user).exists()


def test_createhost_json(db):
    result = call_json("createhost", "dave")
    assert set(result) == {"host", "sign_in", "password"}
    assert result["host"] == "dave" and result["sign_in"] == f"{SITE}/accounts/login/"
    assert get_user_model().objects.get(username="dave").check_password(result["password"])


def test_createhost_with_a_password_file_prints_no_password(db, tmp_path):
    path = write(tmp_path, "pw.txt", "a long enough passphrase\n")
    assert call_json("createhost", "erin", "--password-file", path) == {
        "host": "erin", "sign_in": f"{SITE}/accounts/login/"}
    assert get_user_model().objects.get(username="erin").check_password("a long enough passphrase")


def test_createhost_set_password_gives_an_existing_host_a_new_password(host, tmp_path):
    path = write(tmp_path, "pw.txt", "a new long passphrase\n")
    assert call_json("createhost", "alice", "--set-password", "--password-file", path) == {
        "host": "alice", "sign_in": f"{SITE}/accounts/login/"}
    host.user.refresh_from_db()
    assert host.user.check_password("a new long passphrase")
    generated = call_json("createhost", "alice", "--set-password")["password"]
    host.user.refresh_from_db()
    assert host.user.check_password(generated)
    assert refused_plain("createhost", "nobody", "--set-password") == (
        'no host named "nobody" (create one with createhost)')


def test_createhost_refusals(host, tmp_path):
    short = write(tmp_path, "short.txt", "Xq7#kp\n")
    assert refused("createhost", "frank", "--password-file", short) == (
        "password: This password is too short. It must contain at least 12 characters.")
    assert refused_plain("createhost", "frank", "--password-file", short) == (
        "password: This password is too short. It must contain at least 12 characters.")
    empty = write(tmp_path, "empty.txt", "\n")
    assert refused("createhost", "frank", "--password-file", empty) == (
        "--password-file: the file is empty")
    missing = str(tmp_path / "nope.txt")
    assert refused("createhost", "frank", "--password-file", missing) == (
        f"--password-file: no such file: {missing}")
    assert refused("createhost", "alice", error="conflict") == 'a user named "alice" already exists'
    assert refused("createhost", "ALICE", error="conflict") == 'a user named "ALICE" already exists'
    assert refused("createhost", "bad name!") == (
        "username: Enter a valid username. This value may contain only letters, numbers, and "
        "@/./+/-/_ characters.")
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["alice"]


# --- import_run ----------------------------------------------------------------------------------

def test_import_run_prints_the_run_id(host, tmp_path):
    path = write(tmp_path, "bundle.json", bundle_bytes())
    lines = call("import_run", path, "--host", "alice").splitlines()
    run = Run.objects.get()
    assert lines == [
        f"run {run.pk} imported: add() across three models",
        "6 copies, 2 findings; reviews: 3 absent",
        f"manifest sha256: {run.manifest_sha256}",
    ]
    # The same files again are refused as a second import by mistake, unless the host says so.
    assert refused("import_run", path, "--host", "alice").startswith(
        f"this run was imported already: run {run.pk} (add() across three models) has the same "
        f"manifest (sha256 {run.manifest_sha256[:12]}…); nothing was written.")
    assert Run.objects.count() == 1
    result = call_json("import_run", path, "--host", "alice", "--again")
    second = Run.objects.exclude(pk=run.pk).get()
    assert result == {"run": second.pk, "name": "add() across three models", "copies": 6,
                      "findings": 2, "manifest_sha256": run.manifest_sha256,
                      "seals": {"absent": 3}}
    assert second.host == host


def _with(mutate):
    bundle = make_bundle()
    mutate(bundle)
    return bundle_bytes(bundle)


def _dangling(bundle):
    bundle["copies"][3]["builder"] = "b9"


def _nul_byte(bundle):
    bundle["copies"][1]["content"] = "return a\x00b\n"


def _raw_nul():
    return _with(_nul_byte).replace(b"\\u0000", b"\x00")


def _invalid_utf8():
    raw = bundle_bytes()
    cut = raw.index(b"a + b")
    return raw[:cut] + b"\xff" + raw[cut:]


BAD_BUNDLES = {
    "malformed JSON": (b'{"format": ', "bundle: malformed JSON at line 1 column 12: Expecting value"),
    "trailing comma": (b'{"format": "blindjudge.run/1",}',
                       "bundle: malformed JSON at line 1 column 31: Expecting property name "
                       "enclosed in double quotes"),
    "dangling builder": (_with(_dangling), 'copies[3].builder: unknown builder "b9"'),
    "NUL byte": (_raw_nul(), "copies[1].content: contains a NUL byte at character 8"),
    "escaped NUL": (_with(_nul_byte), "copies[1].content: contains a NUL byte at character 8"),
    "invalid UTF-8": (_invalid_utf8(), "copies[0].content: not valid UTF-8 (byte 0xFF at character 26)"),
    "unknown format": (_with(lambda b: b.update(format="blindjudge.run/9")),
                       'format: unknown format "blindjudge.run/9"; expected "blindjudge.run/1" or '
                       '"blindjudge.run/2"'),
    "bad enum": (_with(lambda b: b["copies"][0].update(truth="maybe")),
                 'copies[0].truth: "maybe" is not one of known_good, seeded_defect, tests_fail, '
                 "tests_pass, unknown"),
}


@pytest.mark.parametrize("kind", list(BAD_BUNDLES))
def test_import_run_refuses_a_bad_bundle_and_writes_nothing(host, tmp_path, kind):
    data, message = BAD_BUNDLES[kind]
    path = write(tmp_path, "bad.json", data)
    assert refused("import_run", path, "--host", "alice") == message
    assert refused_plain("import_run", path, "--host", "alice") == message
    assert not Run.objects.exists()
    assert not AuditEvent.objects.filter(action="run.imported").exists()


def test_import_run_refuses_oversize_bundles_and_copies(host, tmp_path):
    raw = bundle_bytes()
    path = write(tmp_path, "big.json", raw)
    with override_settings(BLINDJUDGE_MAX_BUNDLE_BYTES=len(raw) - 1):
        assert refused("import_run", path, "--host", "alice") == (
            f"bundle: {len(raw)} bytes exceeds the limit of {len(raw) - 1} bytes")
    big_copy = _with(lambda b: b["copies"][2].update(content="x" * 500))
    path = write(tmp_path, "big-copy.json", big_copy)
    with override_settings(BLINDJUDGE_MAX_COPY_BYTES=100):
        assert refused("import_run", path, "--host", "alice") == (
            "copies[2].content: 500 bytes exceeds the per-copy limit of 100 bytes")
    assert not Run.objects.exists()


def test_import_run_refuses_missing_files_directories_and_unknown_hosts(host, tmp_path):
    missing = str(tmp_path / "missing.json")
    assert refused("import_run", missing, "--host", "alice") == f"no such file: {missing}"
    assert refused("import_run", str(tmp_path), "--host", "alice") == (
        f"{tmp_path} is a directory, not a bundle file")
    path = write(tmp_path, "bundle.json", bundle_bytes())
    assert refused("import_run", path, "--host", "nobody") == (
        'no host named "nobody" (create one with createhost)')
    assert not Run.objects.exists()


# --- create_session ------------------------------------------------------------------------------

def _unclashing_run(host):
    """A run whose reviewers share no model or family with a builder (so names may be shown)."""
    bundle = make_bundle()
    bundle["reviewers"][1].update(model="deepseek-v3", family="DeepSeek")
    return a_run(host, bundle)


def test_create_session_with_every_flag(host, tmp_path):
    run = _unclashing_run(host)
    rubric = write(tmp_path, "rubric.txt", "Is add() right?\r\n")
    prereg = write(tmp_path, "prereg.txt", "We expect herding.\n\n```rules\n"
                   '[{"name": "herding", "metric": "delta_recall", "op": "<=", "threshold": 0}]\n'
                   "```\n")
    seed = "ab" * 32
    result = call_json("create_session", str(run.pk), "--kind", "copies", "--rubric", rubric,
                       "--prereg", prereg, "--items-per-judge", "4", "--guests", "--guest-cap",
                       "5", "--reviewer-names", "--scorecards", "--draw-seed", seed)
    session = Session.objects.get()
    assert set(result) == {"session", "state", "items", "guest_code", "guest_page"}
    assert (result["session"], result["state"], result["items"], result["guest_page"]) == (
        session.pk, "draft", 6, f"{SITE}/guest/")
    assert (session.kind, session.rubric, session.items_per_judge, session.guests_allowed,
            session.guest_cap, session.reviewer_display, session.scorecards, session.draw_seed) == (
        "copies", "Is add() right?\n", 4, True, 5, "names", True, seed)
    assert session.preregistration.startswith("We expect herding.")
    session_open(session=session, actor="test")
    guest = guest_join(code=result["guest_code"], display_name="G", client_address="10.0.0.1")
    assert guest.judge.assignments.count() == 4


def test_create_session_takes_the_instructions_and_the_judging_settings(run, tmp_path):
    instructions = write(tmp_path, "instructions.md", "Read **every** copy to the end.\r\n")
    result = call_json("create_session", str(run.pk), "--kind", "copies", "--instructions",
                       instructions, "--minutes-per-item", "7", "--pick-then-save",
                       "--mark-disagreement")
    session = Session.objects.get(pk=result["session"])
    assert (session.instructions, session.minutes_per_item, session.advance_on_key,
            session.mark_disagreement) == ("Read **every** copy to the end.\n", 7, False, True)
    session_open(session=session, actor="test")
    session.refresh_from_db()
    assert session.protocol["instructions"] == "Read **every** copy to the end.\n"
    assert session.protocol["minutes_per_item"] == 7
    # The defaults: no instructions, 3 minutes an item, one key per decision, nothing marked.
    plain = Session.objects.get(pk=call_json("create_session", str(run.pk), "--kind",
                                             "copies")["session"])
    assert (plain.instructions, plain.minutes_per_item, plain.advance_on_key,
            plain.mark_disagreement) == ("", 3, True, False)


@override_settings(BLINDJUDGE_MAX_RUBRIC_CHARS=20)  # the instructions' limit too
def test_create_session_refuses_bad_instructions_and_creates_nothing(run, tmp_path):
    long = write(tmp_path, "long.md", "x" * 21)
    assert refused("create_session", str(run.pk), "--kind", "copies", "--instructions", long) == (
        "instructions: limited to 20 characters (this one has 21)")
    assert refused("create_session", str(run.pk), "--kind", "copies", "--minutes-per-item",
                   "0").startswith("minutes per item: ")
    assert not Session.objects.exists()


def test_create_session_plain_output_prints_the_guest_code(run):
    lines = call("create_session", str(run.pk), "--kind", "findings", "--guests").splitlines()
    session = Session.objects.get()
    assert lines[:3] == [f"session: {session.pk}", "state: draft", "items: 2"]
    assert lines[3].startswith("guest_code: ") and lines[4] == f"guest_page: {SITE}/guest/"
    code = lines[3].removeprefix("guest_code: ")
    assert len(code.replace("-", "")) == 13
    lines = call("create_session", str(run.pk), "--kind", "copies").splitlines()
    assert lines == [f"session: {Session.objects.latest('pk').pk}", "state: draft", "items: 6"]


def test_create_session_refusals(run, tmp_path):
    for n in ("0", "7"):
        assert refused("create_session", str(run.pk), "--kind", "copies", "--items-per-judge",
                       n) == f"items per judge: {n} is outside 1..6 (the session has 6 items)"
    assert refused("create_session", str(run.pk), "--kind", "copies", "--reviewer-names") == (
        'reviewer display: model names would name a builder (reviewer "r2" shares a model or '
        "family with a builder); use Reviewer A, B, … instead")
    assert refused("create_session", str(run.pk), "--kind", "copies", "--guests",
                   "--guest-cap", "0") == "guest cap: must be between 1 and 100000 (or no cap)"
    assert refused("create_session", "999", "--kind", "copies") == "no run 999"
    missing = "/nonexistent/rubric.txt"
    assert refused("create_session", str(run.pk), "--kind", "copies", "--rubric", missing) == (
        f"--rubric: no such file: {missing}")
    nul = write(tmp_path, "nul.txt", "Is it\x00 right?")
    assert refused("create_session", str(run.pk), "--kind", "copies", "--prereg", nul) == (
        f"--prereg: {nul} holds a NUL byte at character 5")
    assert not Session.objects.exists()


def test_create_session_usage_errors(run, capsys):
    with pytest.raises(CommandError, match="argument --items-per-judge: invalid int value: 'many'"):
        call_command("create_session", str(run.pk), "--kind", "copies", "--items-per-judge", "many")
    assert capsys.readouterr().out == ""
    # With --json a usage error is a JSON refusal too (written before call_command's stdout
    # is in place, so to the process's standard output).
    with pytest.raises(CommandError) as error:
        call_command("create_session", str(run.pk), "--kind", "votes", "--json")
    message = ("argument --kind: invalid choice: 'votes' (choose from 'copies', 'findings', "
               "'adjudication', 'reasons', 'pairs')")
    assert str(error.value) == f"Error: {message}"
    assert json.loads(capsys.readouterr().out) == {"ok": False, "error": "invalid", "message": message}
    assert not Session.objects.exists()


def test_create_session_refuses_bad_rules(run, tmp_path):
    prereg = write(tmp_path, "prereg.txt", '```rules\n[{"name": "x", "metric": "vibes", "op": ">=", '
                   '"threshold": 1}]\n```\n')
    message = refused("create_session", str(run.pk), "--kind", "copies", "--prereg", prereg)
    assert message.startswith('preregistration: rules[0].metric: unknown metric "vibes"; known: ')


# --- redactions ----------------------------------------------------------------------------------

@pytest.fixture
def leaky_draft(host):
    bundle = make_bundle()
    bundle["copies"][2]["content"] = "# Claude wrote this\ndef add(a, b):\n    return a + b\n"
    return a_session(a_run(host, bundle), "draft")


def test_redactions_list_shows_every_match(leaky_draft):
    lines = call("redactions", str(leaky_draft.pk), "--list").splitlines()
    assert lines[0] == (f"session {leaky_draft.pk} (draft); accepted patterns: none; kept on "
                        "purpose: none")
    assert lines[1:4] == [
        "builder b1 (gpt-4o-2024-08-06, OpenAI): 2 copies, 0 metadata lines stripped, 0 name "
        "matches, 0 redactions",
        "builder b2 (claude-3-5-sonnet-20241022, Anthropic): 2 copies, 0 metadata lines stripped, "
        "1 name matches, 0 redactions",
        "builder b3 (gemini-1.5-pro, Google): 2 copies, 0 metadata lines stripped, 0 name "
        "matches, 0 redactions",
    ]
    # The match is undecided: named, with where it was first found (opening is refused on it).
    undecided = ["undecided: 1 matched name(s) neither redacted nor kept on purpose (the session "
                 "cannot open until each is decided)",
                 "  undecided 'Claude': 1x, first in copy c3 content 1:3"]
    assert lines[4:6] == undecided
    [match] = lines[6:]
    assert match.startswith("  c3 content 1:3: 'Claude' (known product, undecided)")
    assert match.endswith("— # Claude wrote this")
    plain = call("redactions", str(leaky_draft.pk)).splitlines()
    assert plain[1:] == lines[1:4] + undecided + ["(--list shows every match)"]


def test_redactions_lists_the_task_and_rubric_hits(host):
    bundle = make_bundle()
    bundle["run"]["task"] = "Fix add().\nClaude said\u200b\u200bso."
    session = a_session(a_run(host, bundle), "draft")
    lines = call("redactions", str(session.pk), "--list").splitlines()
    assert "task: 1 name matches, 1 runs of hidden characters, 0 mixed-script words, 0 redactions" in lines
    assert any(line.startswith("  task 2:1: 'Claude' (known product, undecided)") for line in lines)
    assert "  task 2:12: U+200B (invisible character) × 2" in lines


def test_redactions_accept_adds_patterns(leaky_draft):
    result = call_json("redactions", str(leaky_draft.pk), "--accept", "Claude", "re:gpt-4o\\S*")
    assert set(result) == {"session", "state", "accepted_patterns", "copies", "builders", "texts",
                           "listed", "shapes", "dismissed", "undecided"}
    assert result["undecided"] == []  # Claude is redacted now; nothing else matched
    assert result["accepted_patterns"] == ["Claude", "re:gpt-4o\\S*"]
    assert {b["builder"]: b["redactions"] for b in result["builders"]} == {"b1": 0, "b2": 1, "b3": 0}
    [c3] = [c for c in result["copies"] if c["copy"] == "c3"]
    assert (c3["redactions"], [m["matched"] for m in c3["matches"]]) == (1, ["Claude"])
    leaky_draft.refresh_from_db()
    assert leaky_draft.redaction_patterns == ["Claude", "re:gpt-4o\\S*"]
    call("redactions", str(leaky_draft.pk), "--accept", "Claude")  # deduplicated
    call("redactions", str(leaky_draft.pk), "--withdraw", "re:gpt-4o\\S*")
    leaky_draft.refresh_from_db()
    assert leaky_draft.redaction_patterns == ["Claude"]


def test_redactions_accept_given_twice_keeps_both_patterns(leaky_draft):
    """`--accept A --accept B` accepted only B, and the leak A named stayed in the copies (issue 24
    item 7): a repeated list option adds to the list."""
    call("redactions", str(leaky_draft.pk), "--accept", "Claude", "--accept", "re:gpt-4o\\S*",
         "--accept", "Sonnet")
    leaky_draft.refresh_from_db()
    assert leaky_draft.redaction_patterns == ["Claude", "re:gpt-4o\\S*", "Sonnet"]
    call("redactions", str(leaky_draft.pk), "--withdraw", "Claude", "--withdraw", "Sonnet")
    leaky_draft.refresh_from_db()
    assert leaky_draft.redaction_patterns == ["re:gpt-4o\\S*"]


def _list_options(parser):
    """Every option of a parser (and of its subcommands) that takes a list of values."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _list_options(sub)
        elif action.option_strings and action.nargs in ("+", "*", argparse.ONE_OR_MORE,
                                                        argparse.ZERO_OR_MORE):
            yield parser, action


def test_every_list_option_of_every_command_adds_up_when_repeated():
    """Each command's parser is walked, and each option taking several values is given twice, as
    argparse does on `--opt A --opt B`: both values stay (nargs="+" alone keeps only the last)."""
    ours = {"judging", "reports", "accounts", "host", "judge"}
    seen = []
    for name, app in sorted(get_commands().items()):
        if app not in ours:
            continue
        command = load_command_class(app, name)
        for parser, action in _list_options(command.create_parser("manage.py", name)):
            option = action.option_strings[-1]
            namespace = argparse.Namespace(**{action.dest: copy.copy(action.default)})
            action(parser, namespace, ["A"], option)
            action(parser, namespace, ["B", "C"], option)
            assert getattr(namespace, action.dest) == ["A", "B", "C"], f"{name} {option}"
            seen.append(f"{name} {option}")
    # The walk reached the options issue 24 found keeping only their last use.
    assert {"redactions --accept", "redactions --withdraw", "import_run --predictions",
            "import_run --report", "import_run --log"} <= set(seen), seen


def test_redactions_refusals(leaky_draft):
    sid = str(leaky_draft.pk)
    assert refused("redactions", sid, "--accept", "re:(") == (
        "pattern 're:(': invalid regex: missing ), unterminated subpattern at position 0")
    assert refused("redactions", sid, "--accept", "re:x*") == (
        "pattern 're:x*': the regex matches the empty string")
    assert refused("redactions", sid, "--withdraw", "never") == "not an accepted pattern: 'never'"
    assert refused("redactions", sid, "--undismiss", "never") == "not a dismissed match: 'never'"
    # Kept on purpose, so the session opens without a pattern; then both are frozen.
    call("redactions", sid, "--dismiss", "claude")
    session_open(session=leaky_draft, actor="test")
    assert refused("redactions", sid, "--accept", "Claude", error="conflict") == (
        f"cannot change redactions: session {sid} is open")
    assert refused("redactions", sid, "--undismiss", "claude", error="conflict") == (
        f"cannot change the blinding decisions: session {sid} is open")
    leaky_draft.refresh_from_db()
    assert leaky_draft.redaction_patterns == []
    assert leaky_draft.blinding_dismissed == ["claude"]
    assert refused("redactions", "nope") == "no session nope"


# --- open / close / reopen / reveal --------------------------------------------------------------

def test_the_session_lifecycle_commands(draft):
    sid = str(draft.pk)
    opened = call_json("open_session", sid)
    draft.refresh_from_db()
    assert opened == {"session": draft.pk, "state": "open", "protocol_sha256": draft.protocol_sha256}
    assert call("close_session", sid).splitlines() == [
        f"session: {sid}", "state: closed", f"protocol_sha256: {draft.protocol_sha256}"]
    assert call_json("reopen_session", sid)["state"] == "open"
    assert call_json("close_session", sid)["state"] == "closed"
    assert call_json("reveal_session", sid) == {
        "session": draft.pk, "state": "revealed", "protocol_sha256": draft.protocol_sha256}
    actions = list(AuditEvent.objects.filter(session=draft, actor="cli").values_list("action", flat=True))
    assert actions == ["session.opened", "session.closed", "session.reopened", "session.closed",
                       "session.revealed"]


def test_lifecycle_commands_refuse_the_wrong_state(draft):
    sid = str(draft.pk)
    assert refused("close_session", sid, error="conflict") == f"cannot close: session {sid} is draft"
    assert refused("reopen_session", sid, error="conflict") == f"cannot reopen: session {sid} is draft"
    assert refused("reveal_session", sid, error="conflict") == f"cannot reveal: session {sid} is draft"
    call("open_session", sid)
    assert refused("open_session", sid, error="conflict") == f"cannot open: session {sid} is open"
    assert refused("reveal_session", sid, error="conflict") == f"cannot reveal: session {sid} is open"
    assert refused("reopen_session", sid, error="conflict") == f"cannot reopen: session {sid} is open"
    call("close_session", sid)
    call("reveal_session", sid)
    assert refused("reopen_session", sid, error="conflict") == (
        f"cannot reopen: session {sid} is revealed")
    assert refused("close_session", sid, error="conflict") == f"cannot close: session {sid} is revealed"
    for command in ("open_session", "close_session", "reopen_session", "reveal_session"):
        assert refused(command, "999") == "no session 999"
    assert Session.objects.get().state == "revealed"


# --- guests --------------------------------------------------------------------------------------

def test_guests_allow_prints_a_code_that_admits(session_id):
    lines = call("guests", session_id, "--allow").splitlines()
    assert lines[0] == "guests allowed (cap: 50)"  # BLINDJUDGE_DEFAULT_GUEST_CAP (issue 12)
    prefix = "guest code: "
    assert lines[1].startswith(prefix) and lines[1].endswith(f"  (shown once; enter at {SITE}/guest/)")
    code = lines[1][len(prefix):].split("  ")[0]
    assert guest_join(code=code, display_name="Gus", client_address="10.0.0.9").judge.pseudonym == "J01"
    assert call("guests", session_id, "--allow").splitlines() == [
        "guests allowed (cap: 50)", "the guest code is unchanged; --rotate issues a new one"]


def test_guests_rotate_cap_and_deny(session_id):
    first = call_json("guests", session_id, "--allow")
    assert set(first) == {"session", "guests_allowed", "guest_cap", "guest_code", "guest_page"}
    rotated = call_json("guests", session_id, "--rotate", "--cap", "2")
    assert (rotated["guests_allowed"], rotated["guest_cap"]) == (True, 2)
    assert rotated["guest_code"] != first["guest_code"]
    with pytest.raises(Refused):
        guest_join(code=first["guest_code"], display_name="Old", client_address="10.0.0.8")
    guest_join(code=rotated["guest_code"], display_name="New", client_address="10.0.0.8")
    assert call_json("guests", session_id, "--cap", "0") == {
        "session": int(session_id), "guests_allowed": True, "guest_cap": None}
    assert call_json("guests", session_id, "--deny") == {
        "session": int(session_id), "guests_allowed": False, "guest_cap": None}
    with pytest.raises(Refused) as error:
        guest_join(code=rotated["guest_code"], display_name="Late", client_address="10.0.0.8")
    assert error.value.message == GUEST_REFUSAL
    assert call("guests", session_id, "--deny").splitlines() == ["guests not allowed (cap: none)"]


def test_guests_refusals(session_id):
    assert refused("guests", session_id) == "say what to change: --allow, --deny, --cap N or --rotate"
    assert refused("guests", session_id, "--cap", "-1") == "--cap: must be 0 (no cap) or more"
    assert refused("guests", session_id, "--rotate", error="conflict") == (
        "guests are not allowed in this session; allow them first")
    with pytest.raises(CommandError, match="argument --deny: not allowed with argument --allow"):
        call_command("guests", session_id, "--allow", "--deny")
    assert not Credential.objects.filter(kind=CredentialKind.GUEST).exists()


# --- invite --------------------------------------------------------------------------------------

@override_settings(SITE_URL="https://judging.example.org")
def test_invite_by_name_prints_an_absolute_join_link_that_admits(session_id):
    line, expires = call("invite", session_id, "--name", "Ada Lovelace").splitlines()[1:]
    assert line.startswith("join_link: https://judging.example.org/join/")
    assert expires.startswith("expires_at: ")
    admission = join_token_exchange(token=token_of(line.removeprefix("join_link: ")))
    assert admission.judge.display_name == "Ada Lovelace"
    result = call_json("invite", session_id, "--name", "Grace Hopper")
    assert set(result) == {"invitation", "join_link", "expires_at"}
    assert result["join_link"].startswith("https://judging.example.org/join/")
    assert join_token_exchange(token=token_of(result["join_link"])).judge.display_name == "Grace Hopper"


def test_invite_by_github_lists_the_login(session_id):
    result = call_json("invite", session_id, "--github", "@octocat")
    invitation = Invitation.objects.get()
    assert result == {"invitation": invitation.pk, "github_login": "octocat",
                      "sign_in_link": f"{SITE}/github/join/{invitation.session.url_id}/"}
    assert not Credential.objects.filter(kind=CredentialKind.JOIN).exists()
    assert refused("invite", session_id, "--github", "OctoCat", error="conflict") == (
        'GitHub login "OctoCat" is already listed for this session')


def test_invite_by_github_refuses_what_github_would_never_issue_and_stores_nothing(session_id):
    # The invitations form checked GitHub's rule; the command went to the database unchecked, and a
    # 101-character login failed there (a 500 on PostgreSQL's varchar(100)).
    long_login = "a" * 101
    assert refused("invite", session_id, "--github", long_login) == (
        f'Not a GitHub login (1 to 39 letters, digits or single hyphens): "{"a" * 40}…"')
    assert refused("invite", session_id, "--github", "not_a_login") == (
        'Not a GitHub login (1 to 39 letters, digits or single hyphens): "not_a_login"')
    assert not Invitation.objects.exists()


def test_invite_refusals(open_session, session_id):
    with pytest.raises(CommandError, match="one of the arguments --name --github --names-file is required"):
        call_command("invite", session_id)
    assert refused("invite", session_id, "--name", "evil\u202ename") == (
        "name: control and direction characters are not allowed")
    assert refused("invite", session_id, "--name", "   ") == (
        "invite: give either a name or a GitHub login")
    advance(open_session, "revealed")
    assert refused("invite", session_id, "--name", "Late", error="conflict") == (
        "the session is revealed; nobody can join it now")
    assert not Invitation.objects.exists()


# --- judge ---------------------------------------------------------------------------------------

def test_judge_reissue_resume_prints_a_working_link(admission, session_id):
    lines = call("judge", session_id, "J01", "--reissue-resume").splitlines()
    assert lines[0] == "judge: J01" and lines[1].startswith(f"resume_link: {SITE}/resume/")
    fresh = token_of(lines[1].removeprefix("resume_link: "))
    assert selectors.judge_by_resume_token(fresh) == admission.judge
    with pytest.raises(Refused):
        selectors.judge_by_resume_token(admission.resume_token)
    result = call_json("judge", session_id, "j01", "--reissue-resume")
    assert set(result) == {"judge", "resume_link"} and result["judge"] == "J01"
    with pytest.raises(Refused):
        selectors.judge_by_resume_token(fresh)


def test_judge_remove_and_erase(admission, session_id):
    assert call_json("judge", session_id, "J01", "--remove") == {"judge": "J01", "status": "removed"}
    assert refused("judge", session_id, "J01", "--remove", error="conflict") == (
        "judge J01 was already removed")
    assert refused("judge", session_id, "J01", "--reissue-resume", error="conflict") == (
        "judge J01 was removed")
    assert call("judge", session_id, "J01", "--erase").splitlines() == ["judge: J01", "status: erased"]
    judge = Judge.objects.get()
    assert (judge.status, judge.display_name, judge.erased_at is not None) == ("removed", "", True)
    assert refused("judge", session_id, "J01", "--erase", error="conflict") == (
        "judge J01 was already erased")


def test_judge_refusals(admission, session_id):
    assert refused("judge", session_id, "J99", "--remove") == f'session {session_id} has no judge "J99"'
    assert refused("judge", "999", "J01", "--remove") == "no session 999"
    with pytest.raises(CommandError, match="one of the arguments --remove --erase --reissue-resume"):
        call_command("judge", session_id, "J01")
    assert Judge.objects.get().status == "active"


# --- amend_prereg, correct_truth -----------------------------------------------------------------

def test_amend_prereg(open_session, session_id, tmp_path):
    text = "We add a rule.\n\n```rules\n" \
           '[{"name": "drift", "metric": "delta_tnr", "op": "<", "threshold": -0.1}]\n```\n'
    path = write(tmp_path, "amend.txt", text)
    result = call_json("amend_prereg", session_id, path)
    assert set(result) == {"session", "amended_at", "before_first_verdict", "replaces_rules",
                           "text_sha256"}
    assert (result["session"], result["before_first_verdict"], result["replaces_rules"]) == (
        open_session.pk, True, True)
    assert result["text_sha256"] == hashlib.sha256(text.strip().encode()).hexdigest()
    open_session.refresh_from_db()
    assert [r["name"] for r in open_session.decision_rules] == ["drift"]
    judge = invite_and_join(open_session).judge
    verdict_record(judge=judge, code=judge.assignments.first().code, phase=1, value="pass")
    plain = write(tmp_path, "plain.txt", "A note.")
    lines = call("amend_prereg", session_id, plain).splitlines()
    assert "before_first_verdict: False" in lines and "replaces_rules: False" in lines


def test_amend_prereg_refusals(draft, tmp_path):
    path = write(tmp_path, "amend.txt", "Too early.")
    assert refused("amend_prereg", str(draft.pk), path, error="conflict") == (
        f"cannot amend: session {draft.pk} is draft")
    session_open(session=draft, actor="test")
    empty = write(tmp_path, "empty.txt", "  \n")
    assert refused("amend_prereg", str(draft.pk), empty) == "amendment: the text is empty"
    nul = write(tmp_path, "nul.txt", "a\x00b")
    assert refused("amend_prereg", str(draft.pk), nul) == f"amendment: {nul} holds a NUL byte at character 1"
    latin1 = write(tmp_path, "latin1.txt", "caf\xe9".encode("latin-1"))
    assert refused("amend_prereg", str(draft.pk), latin1) == (
        f"amendment: {latin1} is not UTF-8 text (byte 3)")
    bad_rules = write(tmp_path, "rules.txt", '```rules\n[{"name": "x", "metric": "recall_phase1", '
                      '"op": "~", "threshold": 1}]\n```\n')
    assert refused("amend_prereg", str(draft.pk), bad_rules).startswith(
        'amendment: rules[0].op: unknown operator "~"; known: ')
    assert not draft.amendments.exists()


def test_correct_truth(run):
    result = call_json("correct_truth", str(run.pk), "c1", "seeded_defect", "--note",
                       "an off-by-one the tests missed")
    assert set(result) == {"run", "item", "old_truth", "new_truth", "corrected_at"}
    assert (result["run"], result["item"], result["old_truth"], result["new_truth"]) == (
        run.pk, "c1", "known_good", "seeded_defect")
    correction = TruthCorrection.objects.get()
    assert (correction.note, correction.copy.truth, correction.copy.imported_truth) == (
        "an off-by-one the tests missed", "seeded_defect", "known_good")
    lines = call("correct_truth", str(run.pk), "f2", "real", "--note", "it was real").splitlines()
    assert lines[:5] == [f"run: {run.pk}", "item: f2", "old_truth: false_alarm", "new_truth: real",
                         lines[4]] and lines[4].startswith("corrected_at: ")


def test_correct_truth_refusals(run):
    rid = str(run.pk)
    assert refused("correct_truth", rid, "c1", "bogus", "--note", "n") == (
        'truth "bogus" is not one of known_good, seeded_defect, tests_fail, tests_pass, unknown '
        "for a copy")
    assert refused("correct_truth", rid, "f1", "known_good", "--note", "n") == (
        'truth "known_good" is not one of real, false_alarm, unknown for a finding')
    assert refused("correct_truth", rid, "c99", "unknown", "--note", "n", error="not_found") == (
        f'run {rid} has no copy or finding "c99"')
    assert refused("correct_truth", rid, "c1", "known_good", "--note", "n", error="conflict") == (
        '"c1" is already labelled known_good')
    assert refused("correct_truth", rid, "c1", "unknown", "--note", "  ") == (
        "--note: say why the label is corrected")
    assert refused("correct_truth", "999", "c1", "unknown", "--note", "n") == "no run 999"
    with pytest.raises(CommandError, match="the following arguments are required: --note"):
        call_command("correct_truth", rid, "c1", "unknown")
    assert not TruthCorrection.objects.exists()


# --- export_report, verify_report ----------------------------------------------------------------

def test_export_report_json_csv_and_anon(open_session, session_id, tmp_path):
    session = revealed_with_one_judge(open_session)
    out = tmp_path / "report.json"
    result = call_json("export_report", session_id, "--format", "json", "-o", str(out))
    data = out.read_bytes()
    assert result == {"session": session.pk, "format": "json", "file": str(out), "bytes": len(data)}
    report = json.loads(data)
    expected = build_report(session)
    assert {k: v for k, v in report.items() if k != "generated_at"} == {
        k: v for k, v in json.loads(to_json(expected)).items() if k != "generated_at"}
    assert report["judges"][0]["name"] == "Zebediah Quux"

    csv_path = tmp_path / "report.csv"
    lines = call("export_report", session_id, "--format", "csv", "-o", str(csv_path)).splitlines()
    text = csv_path.read_bytes().decode("utf-8")
    assert lines == [f"wrote the csv report of session {session.pk} to {csv_path} "
                     f"({len(text.encode())} bytes)"]
    rows = text.split("\r\n")
    assert rows[0] == ",".join(CSV_COLUMNS)
    assert len([r for r in rows if r.startswith("human,")]) == 6
    assert len([r for r in rows if r.startswith("model,")]) == 3
    assert all(",'=1+1" in r for r in rows if r.startswith("human,"))

    anon_path = tmp_path / "anon.json"
    call("export_report", session_id, "--format", "anon", "-o", str(anon_path))
    anon = anon_path.read_bytes()
    assert b"Zebediah" not in anon and b"Quux" not in anon
    assert json.loads(anon)["anonymised"] is True
    assert call_json("verify_report", str(anon_path))["verified"] is True


def test_export_report_jsonl_and_anon_jsonl(open_session, session_id, tmp_path):
    session = revealed_with_one_judge(open_session)
    out = tmp_path / "report.jsonl"
    result = call_json("export_report", session_id, "--format", "jsonl", "-o", str(out))
    data = out.read_bytes()
    assert result == {"session": session.pk, "format": "jsonl", "file": str(out), "bytes": len(data)}
    rows = [json.loads(line) for line in data.decode("utf-8").splitlines()]
    assert data.count(b"\n") == len(rows) == 6 + 3  # six verdicts, three reviews
    assert all(list(row) == JSONL_COLUMNS for row in rows)
    human = [row for row in rows if row["rater_kind"] == "human"]
    assert {(row["rater"], row["judge"], row["phase"], row["reason"]) for row in human} == {
        ("Zebediah Quux", "J01", 1, "=1+1")}  # as written: nothing neutralised
    assert [row["condition"] for row in rows if row["rater_kind"] == "model"] == ["clean"] * 3

    anon = call("export_report", session_id, "--format", "anon-jsonl", "-o", "-")
    assert "Zebediah" not in anon and "Quux" not in anon
    assert {json.loads(line)["rater"] for line in anon.splitlines()} == {"J01", "r1", "r2"}
    # The session collected no task flags: their CSV is the header alone.
    assert call("export_report", session_id, "--format", "flags", "-o", "-").splitlines() == [
        "judge,group,phase,task,kind,severity,reason"]


def test_export_report_html(open_session, session_id, tmp_path):

    session = revealed_with_one_judge(open_session)
    out = tmp_path / "report.html"
    result = call_json("export_report", session_id, "--format", "html", "-o", str(out))
    page = out.read_bytes().decode("utf-8")
    assert result == {"session": session.pk, "format": "html", "file": str(out),
                      "bytes": len(page.encode("utf-8"))}
    assert page.startswith("<!DOCTYPE html>")
    assert f'<meta http-equiv="Content-Security-Policy" content="{escape(REPORT_META_CSP)}">' in page
    assert "Zebediah Quux" in page and "<script" not in page


def test_export_report_to_standard_output(open_session, session_id):
    revealed_with_one_judge(open_session)
    text = call("export_report", session_id, "--format", "csv", "-o", "-")
    assert text.startswith(",".join(CSV_COLUMNS) + "\r\n")
    assert text.count("\r\n") == 1 + 6 + 3
    # With --json the report is the one JSON document on standard output (no summary after it).
    report = json.loads(call("export_report", session_id, "--format", "anon", "-o", "-", "--json"))
    assert report["anonymised"] is True and report["schema"] == "blindjudge.report/2"


def test_export_report_refusals(open_session, session_id, tmp_path):
    out = tmp_path / "report.json"
    assert refused("export_report", session_id, "--format", "json", "-o", str(out),
                   error="conflict") == (
        f"session {session_id} is open; the report exists after the reveal")
    assert not out.exists()
    revealed_with_one_judge(open_session)
    assert refused("export_report", session_id, "--format", "json", "-o", str(tmp_path / "a\nb")) == (
        "-o: the file name holds control characters")
    nowhere = str(tmp_path / "missing" / "report.json")
    assert refused("export_report", session_id, "--format", "json", "-o", nowhere) == (
        f"cannot write {nowhere}: No such file or directory")
    with pytest.raises(CommandError, match="argument --format: invalid choice: 'pdf'"):
        call_command("export_report", session_id, "--format", "pdf", "-o", str(out))
    assert refused("export_report", "999", "--format", "json", "-o", str(out)) == "no session 999"
    assert not out.exists()


@pytest.fixture
def exported_report(open_session, tmp_path):
    session = revealed_with_one_judge(open_session)
    path = tmp_path / "report.json"
    path.write_bytes(to_json(build_report(session)))
    return path


def test_verify_report_passes_on_an_export(exported_report):
    checks = 3 + 3 + 4 + 3 + 7 + 7 + 1 + (2 + 6 * 2)  # the tasks: 3, the bindings: 7
    assert call("verify_report", str(exported_report)).splitlines() == [
        f"verified: all {checks} published hashes recompute"]
    assert call_json("verify_report", str(exported_report)) == {
        "report": str(exported_report), "checks": checks, "verified": True}


def test_verify_report_fails_on_a_tampered_copy(exported_report, tmp_path):
    data = json.loads(exported_report.read_bytes())
    data["assignments"][0]["builder"] = "b3" if data["assignments"][0]["builder"] != "b3" else "b2"
    tampered = write(tmp_path, "tampered.json", json.dumps(data))
    checks = 3 + 3 + 4 + 3 + 7 + 7 + 1 + (2 + 6 * 2)  # the tasks: 3, the bindings: 7
    a = data["assignments"][0]
    assert refused("verify_report", tampered) == (
        f"2 of {checks} checks failed:\n"
        "judges[J01].commitment: the published mapping, order seed and salt do not hash to the "
        "published commitment\n"
        f"assignments[J01/{a['position']}]: builder {a['builder']!r} is not the builder of copy "
        f"{a['copy']!r} in copies")


def test_verify_report_refuses_what_is_not_a_json_report(db, tmp_path):
    text = write(tmp_path, "report.txt", "not json at all")
    assert refused("verify_report", text) == (
        f"{text} is not a JSON report: Expecting value: line 1 column 1 (char 0)")
    array = write(tmp_path, "array.json", "[1, 2]")
    assert refused("verify_report", array) == f"{array} is not a JSON report"
    binary = write(tmp_path, "binary.json", b"\xff\xfe")
    assert refused("verify_report", binary).startswith(f"{binary} is not a JSON report: 'utf-8' codec")
    empty_object = write(tmp_path, "empty.json", "{}")
    assert refused("verify_report", empty_object) == (
        "1 of 0 checks failed:\nthe report is malformed: KeyError: 'run'")
    missing = str(tmp_path / "missing.json")
    assert refused("verify_report", missing) == f"no such file: {missing}"


# --- demo ----------------------------------------------------------------------------------------

@pytest.fixture
def demo_data_dir(settings, tmp_path):
    """The demo keeps its host's password in the data directory: a fresh one per test."""
    settings.DATA_DIR = tmp_path
    return tmp_path


def test_demo_prints_sign_in_join_link_and_guest_code_that_work(db, demo_data_dir):
    lines = call("demo").splitlines()
    assert len(lines) == 4
    sign_in, session_line, join, guest = lines
    host = Host.objects.get(user__username="demo-host")
    password = sign_in.split("password ")[1].split()[0]
    kept = demo_data_dir / "demo-host-password"
    assert sign_in == (f"Host sign-in:  {SITE}/accounts/login/  user demo-host  password {password}"
                       f"  (kept in {kept})")
    assert host.user.check_password(password)
    assert kept.read_text() == password + "\n"
    session = Session.objects.get()
    assert session_line.startswith(f"Demo run {session.run_id}, session {session.pk} (loaded now; protocol ")
    assert join.startswith(f"Judge's join link (single use):  {SITE}/join/")
    admission = join_token_exchange(token=token_of(join.split()[-1]))
    assert admission.judge.display_name == "Demo Judge"
    assert guest.startswith(f"Guest page:  {SITE}/guest/  guest code ")
    code = guest.rsplit(" ", 1)[1]
    assert guest_join(code=code, display_name="Visitor", client_address="10.0.0.7").judge.pseudonym == "J02"
    assert session.state == "open" and session.redaction_patterns


def test_demo_fresh_gives_a_new_run_session_and_password_and_keeps_the_old(db, demo_data_dir):
    first = call_json("demo")
    assert set(first) == {"host", "password", "password_file", "sign_in", "run", "session",
                          "loaded", "protocol_sha256", "join_link", "guest_page", "guest_code"}
    second = call_json("demo", "--fresh")
    assert (demo_data_dir / "demo-host-password").read_text() == second["password"] + "\n"
    assert second["host"] == first["host"] == "demo-host"
    assert (second["run"], second["session"]) != (first["run"], first["session"])
    assert second["password"] != first["password"]
    user = get_user_model().objects.get(username="demo-host")
    assert user.check_password(second["password"]) and not user.check_password(first["password"])
    assert Host.objects.count() == 1 and Session.objects.count() == 2
    for result in (first, second):
        assert join_token_exchange(token=token_of(result["join_link"])).judge.session_id == result["session"]
        assert guest_join(code=result["guest_code"], display_name="V",
                          client_address="10.0.0.6").judge.session_id == result["session"]


def test_demo_is_one_key_per_decision_unless_asked_for_pick_then_save(db, demo_data_dir):
    assert Session.objects.get(pk=call_json("demo")["session"]).advance_on_key is True
    picked = call_json("demo", "--fresh", "--pick-then-save")
    assert Session.objects.get(pk=picked["session"]).advance_on_key is False


def test_demo_again_loads_nothing_and_prints_the_same_password(db, demo_data_dir):
    first = call_json("demo")
    events = AuditEvent.objects.exclude(action="invitation.reissued").count()
    second = call_json("demo")
    assert second["password"] == first["password"] and not second["loaded"]
    assert (second["run"], second["session"]) == (first["run"], first["session"])
    assert Run.objects.count() == 1 and Session.objects.count() == 1
    assert Invitation.objects.count() == 1
    assert AuditEvent.objects.exclude(action="invitation.reissued").count() == events
    # The demo judge's link is reissued (the first one stops), until they join.
    with pytest.raises(Refused):
        join_token_exchange(token=token_of(first["join_link"]))
    join_token_exchange(token=token_of(second["join_link"]))
    third = call_json("demo")
    assert third["join_link"] == "" and third["password"] == first["password"]
    assert "The demo judge has joined" in call("demo")


def test_demo_refusal_is_json_too(db):
    # A username that cannot be a user name: the refusal comes back as JSON as well.
    assert refused("demo", "--host", "bad name!") == (
        "username: Enter a valid username. This value may contain only letters, numbers, and "
        "@/./+/-/_ characters.")


# --- Real processes: no prompts, non-zero exits --------------------------------------------------

@pytest.fixture(scope="module")
def cli_env(tmp_path_factory):
    """Environment for `manage.py` in a child process, on a database of its own.

    A child process cannot see the test's transaction, and must not write to the shared database
    either, so it gets a throwaway one on the same engine as the test run: a fresh SQLite file, or
    a fresh database on the PostgreSQL server of DATABASE_URL, migrated first and dropped after.
    """
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="blindjudge.settings_test", PYTHONUNBUFFERED="1")
    folder = tmp_path_factory.mktemp("cli")
    env["BLINDJUDGE_DATA_DIR"] = str(folder)
    server = os.environ.get("DATABASE_URL", "")
    dropped = None
    if server.startswith(("postgres://", "postgresql://")):
        name = f"bj_cli_{secrets.token_hex(6)}"
        admin_url = server.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        env["DATABASE_URL"] = server.rsplit("/", 1)[0] + f"/{name}"
        dropped = (admin_url, name)
    else:
        env["DATABASE_URL"] = f"sqlite:///{folder / 'cli.sqlite3'}"
    done = manage(env, "migrate", "--noinput", "-v", "0")
    assert done.returncode == 0, done.stderr
    yield env
    if dropped:
        with psycopg.connect(dropped[0], autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{dropped[1]}" WITH (FORCE)')


def manage(env, *args):
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=env,
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False,
    )


def count_rows(env, table):
    url = env["DATABASE_URL"]
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    with psycopg.connect(url) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_commands_in_a_process_never_prompt_and_exit_non_zero_on_bad_input(cli_env, tmp_path):
    done = manage(cli_env, "createhost", "someone", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["ok"], result["host"]) == (True, "someone") and len(result["password"]) >= 20
    # The password from standard input, which is not a terminal and empty: refused, not awaited.
    done = manage(cli_env, "createhost", "other", "--password-file", "-", "--json")
    assert done.returncode == 1
    assert json.loads(done.stdout) == {"ok": False, "error": "invalid",
                                       "message": "--password-file: the file is empty"}
    assert done.stderr == "CommandError: --password-file: the file is empty\n"
    # A bad bundle: refused naming the place, exit 1, nothing written.
    bad = write(tmp_path, "bad.json", _with(_dangling))
    done = manage(cli_env, "import_run", bad, "--host", "someone")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == 'CommandError: copies[3].builder: unknown builder "b9"\n'
    assert count_rows(cli_env, "judging_run") == 0
    assert count_rows(cli_env, "accounts_host") == 1
    # A usage error: argparse's exit status 2, and with --json a JSON refusal on stdout.
    done = manage(cli_env, "invite", "1", "--json")
    assert done.returncode == 2
    usage = "one of the arguments --name --github --names-file is required"
    assert json.loads(done.stdout) == {"ok": False, "error": "invalid", "message": usage}
    assert f"manage.py invite: error: {usage}" in done.stderr


def test_verify_report_in_a_process(cli_env, exported_report, tmp_path):
    done = manage(cli_env, "verify_report", str(exported_report), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verified"] is True
    data = json.loads(exported_report.read_bytes())
    data["judges"][0]["commitment"]["salt"] = "0" * 64
    tampered = write(tmp_path, "tampered.json", json.dumps(data))
    done = manage(cli_env, "verify_report", tampered)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("CommandError: 1 of 42 checks failed:\njudges[J01].commitment: "
                                  "the published mapping, order seed and salt do not hash")
