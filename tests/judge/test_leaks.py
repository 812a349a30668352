"""Leak canaries over every judge-facing URL in every session state (docs/threats.md cases 10, 12, 12a).

A bundle whose host-only values are distinctive canaries (builders' models and families, bundle
ids of builders, copies, findings and reviewers, defect notes, the run's name, authorship guesses,
reviewers' families; every judge's name and reasons; the database ids of every row, moved to
distinctive ranges first) is imported; a session on it is driven through every state (draft,
open with a judge in phase 1, phase 2, both phases locked, closed, revealed with and without
scorecards). At each state every judge-facing URL pattern the URL resolver knows is requested as
each kind of visitor (the judge, a judge signed in with GitHub, a guest, a removed judge, a host
signed in with GitHub, a stranger), with the visitor's own
values (session URL id, item codes, join and resume tokens) and with unknown and other people's
values (error pages), by GET and by POST; redirects are followed and every /static/ file a judge
page references is fetched. Every body, header and cookie is scanned (tests/support/leakcheck.py): zero
hits. Reviewers' reasons (and reviewers' model names where the host chose to show them) are
canaries too until the judge's own phase-1 lock, and allowed afterwards only on that judge's
item pages.

Judge-facing means every URL pattern except two prefixes, which are not for judges: the host's
pages (`/host/…`, guarded by `host_required`; tests/test_threats_http.py case 11 proves a judge
gets only a sign-in redirect or a 404 there) and allauth's sign-in pages (`/accounts/…`).

Positive controls: the same scanner finds every canary, in every form, on a deliberately unsafe
test-only page (tests/support/urls_unsafe.py), and every content canary in the host's revealed report
(JSON and CSV); the id and query-parameter checks fire on the unsafe page; the twin comparison
fires on a page whose length depends on the truth label.
"""

import hashlib
import json
import re
from dataclasses import dataclass, field
from itertools import product
from urllib.parse import parse_qs, urlsplit

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client, override_settings
from django.urls import Resolver404, resolve

from accounts.models import Credential, Invitation, Judge
from content.vocabulary import TRUTH_LABELS
from judging.enums import SessionKind
from judging.models import (
    Assignment,
    Builder,
    Copy,
    Finding,
    FindingRaise,
    Item,
    Review,
    Reviewer,
    Run,
    Session,
    TaskFlag,
    Verdict,
)
from judging.selectors.judge import judge_phase
from judging.services import (
    KEEP,
    invitation_create,
    join_token_exchange,
    judge_remove,
    phase_lock,
    redactions_accept,
    resume_token_reissue,
    session_close,
    session_create,
    session_open,
    session_reveal,
    session_update_draft,
    task_flag_record,
    verdict_values,
)
from reports.build import build_report
from reports.export import to_csv, to_json
from tests.support import github_standin
from tests.support.leakcheck import (
    FORMS,
    Scanner,
    body_of,
    core_of,
    forms_found,
    page_urls,
    walk_routes,
    without_csrf,
)
from tests.support.urls_unsafe import planted_values
from tests.support.verdicts import verdict_record
from tests.worlds import a_github_judge, a_host, a_run, a_session, invite_and_join

pytestmark = pytest.mark.django_db

EXCLUDED_PREFIXES = ("host/", "accounts/")  # not judge-facing: see the module docstring
UNKNOWN_URL_ID = "zzzz2345zzzz2345zzzz23"
UNKNOWN_CODE = "QQQQ"  # Q is in the code alphabet; no judge here holds it
UNKNOWN_TOKEN = "unknown-token-1234567890abcdefghijklmnopqrstuvw"
WRONG_GUEST_CODE = "WRNG-WRNG-WRNG-W"
SEED = "5eed" * 16
JSON_ACCEPT = {"HTTP_ACCEPT": "application/json"}
# Parameters nothing may sort, filter or page by (case 10).
HIDDEN_QUERY = ("?order=builder&sort=truth&dir=desc&filter=family%3DOpenAI&builder=b1"
                "&truth=seeded_defect&model=gpt-4o&judge=2&phase=2&page=2&format=json&id=1")

TASK = "Write add(a, b) that returns the sum of two numbers."
TASK_SUM = "Write add(a, b) again, without the + operator."
RUBRIC = "Fail the copy if add() does not return a + b for every input."
INSTRUCTIONS = "Read every copy to the end; **take your time**."
CONTENTS = [
    ("text", "def add(a, b):\n    return a + b\n"),
    ("text", "def add(a, b):\n    return a - b\n"),
    ("markdown", "Here it is:\n\n```python\ndef add(a, b):\n    return b + a\n```\n"),
    ("diff", "--- a/add.py\n+++ b/add.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    pass\n"
             "+    return a * b\n"),
    ("text", "def add(a, b):\n    return sum((a, b))\n"),
    ("markdown", "* uses `operator.add`\n\n    import operator\n    add = operator.add\n"),
]
# A defect note naming its builder (build_world's `defect_names_builder`): `shown` is what a judge's
# scorecard must show of it after the reveal (the rest, the builder's model, is redacted).
DEFECT_NAMING = {"copy": "cCANARY02", "shown": "CANARYDEFECT02x — subtracts «instead» of adding"}
TRUTHS = ["known_good", "seeded_defect", "tests_pass", "tests_fail", "known_good", "seeded_defect"]
TRUTH_TWIN = {"known_good": "seeded_defect", "seeded_defect": "known_good",
              "tests_pass": "tests_fail", "tests_fail": "tests_pass", "unknown": "known_good",
              "real": "false_alarm", "false_alarm": "real"}
JUDGE_NAMES = {"A": "CanaryJudgeAda JA1", "B": "CanaryJudgeBob JB2", "R": "CanaryJudgeRem JR3",
               "G": "CanaryGuestGus JG4", "C": "CanaryJudgeCat JC5"}
# H signs in with GitHub (through the local stand-in): their login and numeric id are canaries for
# everyone else.
GITHUB_JUDGE = {"login": "CanaryHubLoginJH6", "id": 987654321012}
GITHUB_HOST = {"login": "CanaryHubHostOH7", "id": 987654321013}
NEWCOMER = "Newcomer"
ID_MODELS = [Run, Session, Builder, Copy, Reviewer, Review, Finding, Item, Assignment, Verdict,
             Judge, Invitation, Credential]


def canary_bundle(*, builder_twin: bool = False, truth_twin: bool = False,
                  two_tasks: bool = False, adjudication: bool = False,
                  proposal_twin: bool = False) -> dict:
    """Six copies by three builders, two reviewers, four reviews, two findings; every value a
    judge must never see is a distinctive canary (with spaces, punctuation and non-ASCII letters
    so its escaped forms differ from its raw form). Twins differ only where they say.
    `two_tasks`: the same as a run/2 bundle of two tasks, each built once by every builder.
    `adjudication`: the same as a run/2 bundle with truth left unknown where an adjudication
    needs it (`adjudication_bundle`); `proposal_twin` (with it) changes only the findings'
    proposed verdicts and who raised them."""
    tag = "TW" if builder_twin else "QX"
    builders = [
        {"id": f"bCANARY{tag}1", "model": f"CANARYMODEL{tag}7-alpha Ω",
         "family": f"CanaryFamily{tag}9 & Söhne"},
        {"id": f"bCANARY{tag}2", "model": f"CANARYMODEL{tag}8/beta «x»",
         "family": f"CanaryFamily{tag}8 Labs"},
        {"id": f"bCANARY{tag}3", "model": f"CANARYMODEL{tag}9 gamma",
         "family": f"CanaryFamily{tag}7 <Corp>"},
    ]
    copies = []
    for index, ((fmt, content), truth) in enumerate(zip(CONTENTS, TRUTHS, strict=True)):
        copy = {"id": f"cCANARY0{index + 1}", "builder": builders[index // 2]["id"], "format": fmt,
                "content": content, "truth": TRUTH_TWIN[truth] if truth_twin else truth}
        if index in (1, 5):
            copy["defect"] = f"CANARYDEFECT0{index + 1}x — subtracts «instead» of adding"
        copies.append(copy)
    if two_tasks:
        for index, copy in enumerate(copies):
            copy["task"] = ("tADD", "tSUM")[index % 2]
        # No findings: run/2 wants a finding raised in a review, and a by-task session judges copies.
        return {**_canary_records(builders, copies, truth_twin), "format": "blindjudge.run/2",
                "findings": [],
                "run": {"name": "CANARYRUNNAMEQ1 Ω sweep"},
                "tasks": [{"id": "tADD", "statement": TASK}, {"id": "tSUM", "statement": TASK_SUM}]}
    if adjudication:
        return adjudication_bundle(_canary_records(builders, copies, truth_twin), proposal_twin)
    assert not proposal_twin, "a proposal twin is an adjudication bundle's"
    return _canary_records(builders, copies, truth_twin)


# The adjudication bundle's reviewer conditions: the default one (whose reviews judges of other
# kinds see in phase 2) and one a reviewer was told a prior verdict under. Their names are the
# host's, canaries like the rest (an adjudicator sees no review at all).
ADJ_CONDITIONS = ("CanaryCondCleanCC1", "CanaryCondTold.CT2")
# What an adjudication on it holds: the findings and the copy of unknown truth, and the host names
# a finding and a copy of known truth besides (as after a truth correction), so that truth labels,
# a defect note and a proposed verdict exist on the adjudicator's own items.
ADJ_NAMED = {"adjudicate_findings": ("fCANARYF1",), "adjudicate_copies": ("cCANARY02",)}


def adjudication_bundle(records: dict, proposal_twin: bool) -> dict:
    """The canary records as a run/2 bundle of one task, with what an adjudication needs: findings
    fCANARYF2 and fCANARYF3 and copy cCANARY05 of unknown truth (in twins too: only an unknown
    item is adjudicated by default), reviewer conditions named by canaries (ADJ_CONDITIONS), and
    reviews of every finding's copy by the reviewers who raised it (run/2 wants a finding raised
    in a review), one under the second condition."""
    default, told = ADJ_CONDITIONS
    for copy in records["copies"]:
        copy["task"] = "tADD"
        if copy["id"] == "cCANARY05":
            copy["truth"] = "unknown"
    records["reviews"] += [
        {"reviewer": "rCANARYR1", "copy": "cCANARY05", "verdict": "pass",
         "reason": "CANARYREVIEWREASON05 sum «fine»", "authorship_guess": "CanaryGuessModelG05 z"},
        {"reviewer": "rCANARYR1", "copy": "cCANARY05", "condition": told, "verdict": "fail",
         "reason": "CANARYREVIEWREASON06 told it passed ø"},
        {"reviewer": "rCANARYR1", "copy": "cCANARY06", "verdict": "fail",
         "reason": "CANARYREVIEWREASON07 not code «x»"},
        {"reviewer": "rCANARYR2", "copy": "cCANARY06", "verdict": "fail",
         "reason": "CANARYREVIEWREASON08 indented ü"},
    ]
    flip = {"confirmed": "refuted", "refuted": "confirmed"}
    for finding in records["findings"]:
        if finding["id"] in ("fCANARYF2", "fCANARYF3"):
            finding["truth"] = "unknown"
        if finding["id"] == "fCANARYF3":
            finding["raised_by"] = [{"reviewer": "rCANARYR1", "condition": told}]
        if proposal_twin:
            finding["proposed_verdict"] = flip[finding["proposed_verdict"]]
            if finding["id"] == "fCANARYF1":
                finding["raised_by"] = ["rCANARYR2"]
            if finding["id"] == "fCANARYF3":
                finding["raised_by"] = ["rCANARYR1"]
    run = records.pop("run")
    return {**records, "format": "blindjudge.run/2",
            "run": {"name": run["name"], "default_condition": default},
            "tasks": [{"id": "tADD", "statement": run["task"]}]}


def _canary_records(builders, copies, truth_twin) -> dict:
    return {
        "format": "blindjudge.run/1",
        "run": {"name": "CANARYRUNNAMEQ1 Ω sweep", "task": TASK},
        "builders": builders,
        "copies": copies,
        "reviewers": [
            {"id": "rCANARYR1", "model": "CanaryReviewerModelRM1 v2", "family": "CanaryReviewerFamRF1 Inc"},
            {"id": "rCANARYR2", "model": "CanaryReviewerModelRM2", "family": "CanaryReviewerFamRF2 ß"},
        ],
        "reviews": [
            {"reviewer": "rCANARYR1", "copy": "cCANARY01", "verdict": "pass",
             "reason": "CANARYREVIEWREASON01 — returns «a + b»", "authorship_guess": "CanaryGuessModelG01 x"},
            {"reviewer": "rCANARYR1", "copy": "cCANARY02", "verdict": "fail",
             "reason": "CANARYREVIEWREASON02 & it subtracts", "authorship_guess": "CanaryGuessModelG02 y"},
            {"reviewer": "rCANARYR2", "copy": "cCANARY02", "verdict": "fail",
             "reason": "CANARYREVIEWREASON03 <minus>"},
            {"reviewer": "rCANARYR2", "copy": "cCANARY04", "verdict": "pass",
             "reason": "CANARYREVIEWREASON04 ok ü"},
        ],
        "findings": [
            {"id": "fCANARYF1", "copy": "cCANARY02", "text": "The function subtracts instead of adding.",
             "raised_by": ["rCANARYR1", "rCANARYR2"], "proposed_verdict": "confirmed",
             "truth": TRUTH_TWIN["real"] if truth_twin else "real"},
            {"id": "fCANARYF2", "copy": "cCANARY04", "text": "It multiplies the arguments.",
             "raised_by": ["rCANARYR2"], "proposed_verdict": "refuted",
             "truth": TRUTH_TWIN["false_alarm"] if truth_twin else "false_alarm"},
            {"id": "fCANARYF3", "copy": "cCANARY05", "text": "sum() of a tuple is slower.",
             "raised_by": ["rCANARYR1"], "proposed_verdict": "confirmed",
             "truth": TRUTH_TWIN["false_alarm"] if truth_twin else "false_alarm"},
            {"id": "fCANARYF4", "copy": "cCANARY06", "text": "The indented block is not code.",
             "raised_by": ["rCANARYR2", "rCANARYR1"], "proposed_verdict": "refuted",
             "truth": TRUTH_TWIN["real"] if truth_twin else "real"},
        ],
    }


def move_ids_to_distinctive_ranges() -> list:
    """Start every table's ids in a range of its own (61000000…, 62000000…, …), so a database
    id in a response is recognisable as one and cannot pass for a count or a position.

    Returns what `restore_ids` needs: PostgreSQL's sequences are not rolled back with the test's
    transaction, so they are put back as they were (SQLite's counters roll back by themselves)."""
    saved = []
    with connection.cursor() as cursor:
        for index, model in enumerate(ID_MODELS):
            table = model._meta.db_table
            start = (61 + index) * 1_000_000 + 1
            current = model.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
            start = max(start, current + 1)
            if connection.vendor == "postgresql":
                cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
                sequence = cursor.fetchone()[0]
                cursor.execute(f"SELECT last_value, is_called FROM {sequence}")
                saved.append((sequence, *cursor.fetchone()))
                cursor.execute("SELECT setval(%s, %s, false)", [sequence, start])
            else:
                cursor.execute("UPDATE sqlite_sequence SET seq = %s WHERE name = %s", [start - 1, table])
                if cursor.rowcount == 0:
                    cursor.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)",
                                   [table, start - 1])
    return saved


def restore_ids(saved: list):
    with connection.cursor() as cursor:
        for sequence, last_value, is_called in saved:
            cursor.execute("SELECT setval(%s, %s, %s)", [sequence, last_value, is_called])


# --- A world: one session, its judges and the tokens a visitor might hold ------------------------

@dataclass
class Persona:
    label: str
    client: Client
    judge_pk: int | None = None
    resume_token: str = ""

    def judge(self):
        return Judge.objects.select_related("session").get(pk=self.judge_pk) if self.judge_pk else None


@dataclass
class World:
    run: Run
    session: Session
    other: Session
    guest_code: str
    join_pool: list
    tokens: dict = field(default_factory=dict)  # "used_join", "revoked_resume"
    personas: dict = field(default_factory=dict)
    reasons: dict = field(default_factory=dict)  # judge pk -> their reasons
    all_join_tokens: list = field(default_factory=list)
    standin: object = None  # the GitHub stand-in (tests/support/github_standin.py)
    # More sessions on the run whose judges are other people (an adjudication's world: the copies
    # and findings sessions judged beside it).
    others: list = field(default_factory=list)

    @property
    def kind(self):
        return self.session.kind

    @property
    def sessions(self) -> list:
        return [self.session, self.other, *self.others]

    def reload(self):
        self.session.refresh_from_db()


def reason_for(label: str, index: int) -> str:
    return f"CanaryReason{label}{index:02d} — my «view»"


def build_world(host, bundle, *, kind="copies", display="letters", scorecards=False,
                seed="", standin=None, by_task=False, items_per_judge=None,
                defect_names_builder=False) -> World:
    """`defect_names_builder`: a defect note names its copy's builder (issue 24 item 9), as a
    host's notes do; the host accepts that model name as a pattern (opening refuses otherwise),
    so a judge's scorecard shows the note with the name redacted."""
    if defect_names_builder:
        copy = next(c for c in bundle["copies"] if c["id"] == DEFECT_NAMING["copy"])
        model = next(b["model"] for b in bundle["builders"] if b["id"] == copy["builder"])
        copy["defect"] = f"{DEFECT_NAMING['shown']}; {model} wrote it"
    run = a_run(host, bundle)
    created = session_create(run=run, kind=kind, actor="test", rubric=RUBRIC, guests_allowed=True,
                             reviewer_display=display, scorecards=scorecards, draw_seed=seed,
                             by_task=by_task, items_per_judge=items_per_judge,
                             task_flags=kind == "copies")
    if defect_names_builder:
        redactions_accept(session=created.session, patterns=[model], actor="test")
    other = a_session(run, "open", draw_seed=seed)
    invite_and_join(other, name=JUDGE_NAMES["C"])
    # Instructions, so the judges' instructions page carries the host's text too.
    session = session_update_draft(session=created.session, actor="test", instructions=INSTRUCTIONS)
    tokens = {label: invitation_create(session=session, actor="test", name=JUDGE_NAMES[label]).join_token
              for label in ("A", "B", "R")}
    pool = [invitation_create(session=session, actor="test", name=NEWCOMER).join_token for _ in range(24)]
    invitation_create(session=session, actor="test", github_login=GITHUB_JUDGE["login"])
    world = World(run=run, session=session, other=other, guest_code=created.guest_code, join_pool=pool,
                  all_join_tokens=list(pool), standin=standin)
    world.tokens.update(join_A=tokens["A"], join_B=tokens["B"], join_R=tokens["R"])
    world.personas["V"] = Persona("V", Client())
    return world


def github_host_signs_in(world, on_response) -> Persona:
    """O: a host of other runs, signed in with GitHub (allowlisted), visiting judge pages."""
    o = Persona("O", Client(REMOTE_ADDR="198.51.100.40"))
    with override_settings(BLINDJUDGE_HOST_GITHUB_ALLOWLIST=[GITHUB_HOST["login"].lower()]):
        callback, _ = github_standin.sign_in(o.client, world.standin, github_id=GITHUB_HOST["id"],
                                             login=GITHUB_HOST["login"],
                                             start_url="/accounts/host-github/")
        done = o.client.get(callback["Location"])
    assert done["Location"] == "/host/", done
    return o


def codes_of(judge_pk) -> list[str]:
    return list(Assignment.objects.filter(judge_id=judge_pk).order_by("position")
                .values_list("code", flat=True))


def copy_codes_of(judge_pk) -> list[str]:
    """A pairs judge's copy codes (each copy's own, the frames' codes), sorted: an order that
    does not follow which copy of a pair is its first (the twins of case 14e compare the crawl's
    requests too); none for a judge of any other kind."""
    return sorted({code for pair in Assignment.objects.filter(judge_id=judge_pk)
                   .exclude(first_code="").values_list("first_code", "second_code")
                   for code in pair})


def post_verdicts(persona, world, label, phase, positions, on_response, keep_every=3):
    """The persona's verdicts over HTTP, with their own reasons; the answers are scanned too."""
    client, judge_pk = persona.client, persona.judge_pk
    values = verdict_values(world.kind)
    codes = codes_of(judge_pk)
    for position in positions:
        code = codes[position]
        value = values[position % 2]
        if phase == 2 and position % keep_every == 0:
            value = KEEP
        path = f"/s/{world.session.url_id}/i/{code}/"
        response = client.post(path, {"verdict": value, "phase": str(phase),
                                      "reason": reason_for(label, position + 10 * phase),
                                      "seconds_spent": str(3 + position), "go": "stay"})
        on_response(persona, "POST", path, response)
        assert response.status_code == 302, response.content[:300]
        world.reasons.setdefault(judge_pk, set()).add(reason_for(label, position + 10 * phase))


def service_verdicts(world, judge, label, phase):
    values = verdict_values(world.kind)
    for position, code in enumerate(codes_of(judge.pk)):
        verdict_record(judge=judge, code=code, phase=phase, value=values[(position + 1) % 2],
                       reason=reason_for(label, position + 10 * phase), seconds_spent=2)
        world.reasons.setdefault(judge.pk, set()).add(reason_for(label, position + 10 * phase))


def drive(world, on_response):
    """The session through every state; yields (state, personas to crawl as). Joining and judging
    by A and G go over HTTP, and `on_response` sees those responses too."""
    session = world.session
    world.personas["O"] = github_host_signs_in(world, on_response)
    yield "draft", ["V", "O"]

    session_open(session=session, actor="test")
    world.reload()
    # A joins by join link over HTTP; the join page, the POST and the welcome page are scanned.
    a = Persona("A", Client())
    token = world.tokens["join_A"]
    on_response(a, "GET", f"/join/{token}", a.client.get(f"/join/{token}"))
    joined = a.client.post(f"/join/{token}")
    on_response(a, "POST", f"/join/{token}", joined)
    assert joined.status_code == 302
    welcome = a.client.get(joined["Location"])
    on_response(a, "GET", joined["Location"], welcome)
    a.judge_pk = Judge.objects.get(session=session, display_name=JUDGE_NAMES["A"]).pk
    first_resume = re.search(r"/resume/([A-Za-z0-9_\-]+)", welcome.content.decode()).group(1)
    a.resume_token = resume_token_reissue(judge=a.judge(), actor="test")
    world.tokens.update(used_join=token, revoked_resume=first_resume)
    # The reissue ended this browser's session (case 37): A comes back with the new link.
    resumed = a.client.post(f"/resume/{a.resume_token}")
    on_response(a, "POST", f"/resume/{a.resume_token}", resumed)
    assert resumed.status_code == 302
    world.personas["A"] = a
    if session.task_flags:
        # A flags a task over HTTP, its reason a canary to everyone but A (issue 29 item 5).
        code = codes_of(a.judge_pk)[0]
        path = f"/s/{session.url_id}/i/{code}/flag"
        flagged = a.client.post(path, {"phase": "1", "kind": "tests_unfair", "severity": "2",
                                       "reason": reason_for("A", 95)})
        on_response(a, "POST", path, flagged)
        assert flagged.status_code == 302, flagged.content[:300]
    # G joins with the guest code over HTTP.
    g = Persona("G", Client(REMOTE_ADDR="198.51.100.20"))
    response = g.client.post("/guest/", {"code": world.guest_code, "name": JUDGE_NAMES["G"]})
    on_response(g, "POST", "/guest/", response)
    assert response.status_code == 302
    on_response(g, "GET", response["Location"], g.client.get(response["Location"]))
    g.judge_pk = Judge.objects.get(session=session, display_name=JUDGE_NAMES["G"]).pk
    world.personas["G"] = g
    # H signs in with GitHub (the whole OAuth dance against the stand-in) and confirms by POST.
    h = Persona("H", Client(REMOTE_ADDR="198.51.100.30"))
    start = f"/github/join/{session.url_id}/"
    on_response(h, "GET", start, h.client.get(start))
    callback, _ = github_standin.sign_in(h.client, world.standin, github_id=GITHUB_JUDGE["id"],
                                         login=GITHUB_JUDGE["login"], start_url=start)
    on_response(h, "GET", "/accounts/github/login/callback/", callback)
    on_response(h, "GET", callback["Location"], h.client.get(callback["Location"]))
    joined = h.client.post(callback["Location"])
    on_response(h, "POST", callback["Location"], joined)
    assert joined.status_code == 302, joined.content[:300]
    on_response(h, "GET", joined["Location"], h.client.get(joined["Location"]))
    h.judge_pk = Judge.objects.get(session=session, github_id=GITHUB_JUDGE["id"]).pk
    world.personas["H"] = h
    # B (another judge) races ahead: phase 1 locked, phase 2 drafts. R joins and is removed.
    b = join_token_exchange(token=world.tokens["join_B"]).judge
    service_verdicts(world, b, "Bob", 1)
    phase_lock(judge=b, phase=1)
    service_verdicts(world, b, "Bob", 2)
    r_admission = join_token_exchange(token=world.tokens["join_R"])
    r = Persona("R", Client(), r_admission.judge.pk, r_admission.resume_token)
    r.client.post(f"/resume/{r.resume_token}")
    service_verdicts(world, r_admission.judge, "Rem", 1)
    judge_remove(judge=r_admission.judge, actor="test")
    world.personas["R"] = r
    # C, in the other session, has reasons too.
    c = Judge.objects.get(session=world.other)
    for position, code in enumerate(codes_of(c.pk)):
        verdict_record(judge=c, code=code, phase=1, value="pass", reason=reason_for("Cat", position))
        world.reasons.setdefault(c.pk, set()).add(reason_for("Cat", position))
    # A and G save some phase-1 drafts.
    items = len(codes_of(a.judge_pk))
    half = items // 2
    post_verdicts(a, world, "Ada", 1, range(half), on_response)
    post_verdicts(g, world, "Gus", 1, range(half - 1), on_response)
    post_verdicts(h, world, "Hub", 1, range(1), on_response)
    yield "phase 1", ["A", "G", "R", "H", "O"]

    post_verdicts(a, world, "Ada", 1, range(half, items), on_response)
    response = a.client.post(f"/s/{session.url_id}/lock/", {"confirm": "yes", "phase": "1"})
    on_response(a, "POST", f"/s/{session.url_id}/lock/", response)
    assert response.status_code == 302
    post_verdicts(a, world, "Ada", 2, range(half), on_response)
    yield "phase 2", ["A", "G"]

    post_verdicts(a, world, "Ada", 2, range(half, items), on_response)
    response = a.client.post(f"/s/{session.url_id}/lock/", {"confirm": "yes", "phase": "2"})
    on_response(a, "POST", f"/s/{session.url_id}/lock/", response)
    assert response.status_code == 302
    yield "locked", ["A", "G"]

    session_close(session=session, actor="test")
    world.reload()
    yield "closed", ["A", "G"]

    session_reveal(session=session, actor="test")
    world.reload()
    yield "revealed", ["A", "G", "H", "O"]


# --- An adjudication's world (issue 29 items 1 and 5) -------------------------------------------

ADJUDICATOR = JUDGE_NAMES["A"]
# Other judges of the same run: of a copies session (by join link, and one by GitHub) and of a
# findings session. Their names, logins, reasons and task flags are canaries to the adjudicator.
OTHER_JUDGES = {"copies": "CanaryCopiesJudgeKim JK7", "findings": "CanaryFindingsJudgeLou JL8"}
NO_GUEST_CODE = "NOGU-ESTS-HERE-X"  # an adjudication has no guest code: the crawl's guess


def judged_by_others(world, session, label, standin=None):
    """A judge of `session` (a copies or findings session on the world's run) answers every item
    with canary reasons in both phases, flags a task where the session collects flags; with
    `standin`, a judge signed in with GitHub answers phase 1 too."""
    judge = invite_and_join(session, name=OTHER_JUDGES[session.kind]).judge
    service_verdicts_in(world, session, judge, label, 1)
    phase_lock(judge=judge, phase=1)
    service_verdicts_in(world, session, judge, label, 2)
    if session.task_flags:
        task_flag_record(judge=judge, code=codes_of(judge.pk)[0], phase=2, kind="tests_unfair",
                         severity=2, reason=reason_for(label, 97))
    if standin is not None:
        hub = a_github_judge(session, standin, login=GITHUB_JUDGE["login"], github_id=GITHUB_JUDGE["id"])
        service_verdicts_in(world, session, hub, label + "Hub", 1)


def service_verdicts_in(world, session, judge, label, phase):
    values = verdict_values(session.kind)
    for position, code in enumerate(codes_of(judge.pk)):
        verdict_record(judge=judge, code=code, phase=phase, value=values[position % 2],
                       reason=reason_for(label, position + 10 * phase), seconds_spent=2)
        world.reasons.setdefault(judge.pk, set()).add(reason_for(label, position + 10 * phase))


def build_adjudication_world(host, bundle, *, seed="", standin=None) -> World:
    """A run of the adjudication canary bundle, judged by others in a copies session (with task
    flags, and a GitHub judge when there is a `standin`) and in a findings session, and an
    adjudication of its unknown truth (and of a finding and a copy the host names, ADJ_NAMED),
    with names shown for reviewers (what would show their models, were any review shown), the
    host's instructions, the adjudicator's invitation (A) and a pool of join links for the crawl.
    The world's `other` is the copies session: the crawl puts its URL id in the adjudicator's
    URLs."""
    run = a_run(host, bundle)
    copies = a_session(run, "open", draw_seed=seed, task_flags=True)
    findings = a_session(run, "open", kind="findings", draw_seed=seed)
    created = session_create(run=run, kind=SessionKind.ADJUDICATION, actor="test", rubric=RUBRIC,
                             reviewer_display="names", draw_seed=seed, unknown_copies=True,
                             **ADJ_NAMED)
    session = session_update_draft(session=created.session, actor="test", instructions=INSTRUCTIONS)
    assert created.guest_code is None
    token = invitation_create(session=session, actor="test", name=ADJUDICATOR).join_token
    pool = [invitation_create(session=session, actor="test", name=NEWCOMER).join_token for _ in range(24)]
    world = World(run=run, session=session, other=copies, others=[findings],
                  guest_code=NO_GUEST_CODE, join_pool=pool, all_join_tokens=list(pool),
                  standin=standin)
    world.tokens.update(join_A=token)
    world.personas["V"] = Persona("V", Client())
    judged_by_others(world, copies, "Kim", standin)
    judged_by_others(world, findings, "Lou")
    return world


def adjudicator_answers(world, persona, positions, on_response):
    """The adjudicator's answers over HTTP, each with its reason (findings: real, false alarm or
    cannot tell; copies: pass, fail or cannot tell); the answers are scanned too."""
    findings = dict(Assignment.objects.filter(judge_id=persona.judge_pk)
                    .values_list("code", "item__finding_id"))
    codes = codes_of(persona.judge_pk)
    for position in positions:
        code = codes[position]
        value = verdict_values(world.kind, finding=findings[code] is not None)[position % 3]
        path = f"/s/{world.session.url_id}/i/{code}/"
        response = persona.client.post(path, {"verdict": value, "phase": "1",
                                               "reason": reason_for("Ada", position),
                                               "seconds_spent": str(3 + position), "go": "stay"})
        on_response(persona, "POST", path, response)
        assert response.status_code == 302, response.content[:300]


def drive_adjudication(world, on_response):
    """The adjudication through its states, as `drive` does a session: a stranger and a host of
    other runs see the draft; the adjudicator A joins by join link over HTTP (the join page, the
    welcome page, a reissued resume link), is crawled before answering, after answering some,
    after answering all, after the lock, after the session closes and after the reveal. Another
    invited person's join is refused (one adjudicator), over HTTP; the other sessions' judges go
    on judging meanwhile (more reasons, each a canary)."""
    session = world.session
    world.personas["O"] = github_host_signs_in(world, on_response)
    yield "draft", ["V", "O"]

    session_open(session=session, actor="test")
    world.reload()
    a = Persona("A", Client())
    token = world.tokens["join_A"]
    on_response(a, "GET", f"/join/{token}", a.client.get(f"/join/{token}"))
    joined = a.client.post(f"/join/{token}")
    on_response(a, "POST", f"/join/{token}", joined)
    assert joined.status_code == 302, joined.content[:300]
    welcome = a.client.get(joined["Location"])
    on_response(a, "GET", joined["Location"], welcome)
    a.judge_pk = Judge.objects.get(session=session, display_name=ADJUDICATOR).pk
    first_resume = re.search(r"/resume/([A-Za-z0-9_\-]+)", welcome.content.decode()).group(1)
    a.resume_token = resume_token_reissue(judge=a.judge(), actor="test")
    world.tokens.update(used_join=token, revoked_resume=first_resume)
    resumed = a.client.post(f"/resume/{a.resume_token}")
    on_response(a, "POST", f"/resume/{a.resume_token}", resumed)
    assert resumed.status_code == 302
    world.personas["A"] = a
    items = len(codes_of(a.judge_pk))
    assert items == 5, items  # fCANARYF1-3, cCANARY02, cCANARY05
    yield "open, before answering", ["A", "V"]

    adjudicator_answers(world, a, range(2), on_response)
    # The other sessions' judges go on: a new judge of the copies session answers with reasons.
    judge = invite_and_join(world.other, name="CanaryLateJudgeMo JM9").judge
    service_verdicts_in(world, world.other, judge, "Mo", 1)
    yield "answering", ["A"]

    adjudicator_answers(world, a, range(2, items), on_response)
    yield "answered", ["A"]

    response = a.client.post(f"/s/{session.url_id}/lock/", {"confirm": "yes", "phase": "1"})
    on_response(a, "POST", f"/s/{session.url_id}/lock/", response)
    assert response.status_code == 302, response.content[:300]
    assert a.judge().phase1_locked_at and judge_phase(a.judge()) is None
    yield "locked", ["A"]

    session_close(session=session, actor="test")
    world.reload()
    yield "closed", ["A"]

    session_reveal(session=session, actor="test")
    world.reload()
    yield "revealed", ["A", "O"]


# --- A reasons session's world (issue 30 items 2 and 6) ------------------------------------------

AUDITORS = {"A": JUDGE_NAMES["A"], "B": JUDGE_NAMES["B"]}


def reasons_bundle(*, seal_twin: bool = False, **options) -> dict:
    """The adjudication canary bundle (`canary_bundle(adjudication=True, **options)`) with the
    exact request each review was made with: canary texts (the copy as sent, the reviewer's
    profile, evidence references), each sealed by its hash, and every other one carrying an
    unexpected key named by a canary, so its seal fails with a reason that names it. Requests and
    seal reasons are canaries (`content_canaries`); `seal_twin` words every request otherwise and
    moves the unexpected key to the other reviews, so every review's seal outcome flips, the
    audited reviews' too."""
    bundle = canary_bundle(adjudication=True, **options)
    tag = "SW" if seal_twin else "SQ"
    for index, review in enumerate(bundle["reviews"]):
        fields = {"candidate_text": f"CanaryRequestText{tag}{index:02d} «the copy»",
                  "reviewer_profile": f"CanaryRequestProfile{tag}{index:02d} ø",
                  "evidence_refs": [f"CanaryEvidenceRef{tag}{index:02d}"]}
        if (index % 2 == 1) != seal_twin:
            fields[f"CanarySealKey{tag}{index:02d}x"] = "x"
        request = json.dumps(fields, ensure_ascii=False)
        review["request"] = request
        review["request_sha256"] = hashlib.sha256(request.encode("utf-8")).hexdigest()
    return bundle


def reasons_twin(bundle: dict, *, audited: set, reviewers: bool = True) -> dict:
    """The canary bundle (`canary_bundle(adjudication=True, …)`) changed everywhere an auditor
    must learn nothing of, and nowhere they may: with `reviewers`, the reviewers' models and
    families (their ids stay: they name the items, whose keys the protocol holds); every review
    not in `audited` ((reviewer, copy) of the default condition: the auditor's own) gets another
    verdict, reason and authorship guess, as does every review under the second condition."""
    default, _ = ADJ_CONDITIONS
    if reviewers:
        for index, reviewer in enumerate(bundle["reviewers"]):
            reviewer["model"] = f"CanaryTwinReviewerModelTM{index} «t»"
            reviewer["family"] = f"CanaryTwinReviewerFamTF{index} Ltd"
    flip = {"pass": "fail", "fail": "pass"}
    for index, review in enumerate(bundle["reviews"]):
        if (review.get("condition", default) == default
                and (review["reviewer"], review["copy"]) in audited):
            continue
        review["verdict"] = flip[review["verdict"]]
        review["reason"] = f"CANARYTWINREASON{index:02d} quite «other» words, longer"
        if review.get("authorship_guess"):
            review["authorship_guess"] = f"CanaryTwinGuess{index:02d}"
    return bundle


def build_reasons_world(host, bundle, *, seed="", standin=None) -> World:
    """A run of the adjudication canary bundle (run/2: two reviewer conditions named by canaries,
    seven reviews of the default condition over five copies, two of those copies reviewed by both
    reviewers) judged by others in a copies session (with task flags, and a GitHub judge when there
    is a `standin`) and a findings session, neither revealed; and a reasons session auditing every
    default-condition review, with names shown for reviewers (what would show their models, were
    any reviewer shown), the host's instructions, two auditors' invitations (A, crawled; B, who
    answers through the services, their reasons canaries to A) and a pool of join links for the
    crawl. The world's `other` is the copies session."""
    run = a_run(host, bundle)
    copies = a_session(run, "open", draw_seed=seed, task_flags=True)
    findings = a_session(run, "open", kind="findings", draw_seed=seed)
    created = session_create(run=run, kind=SessionKind.REASONS, actor="test", rubric=RUBRIC,
                             reviewer_display="names", draw_seed=seed)
    session = session_update_draft(session=created.session, actor="test", instructions=INSTRUCTIONS)
    assert created.guest_code is None  # a reasons session has no guests
    tokens = {label: invitation_create(session=session, actor="test", name=name).join_token
              for label, name in AUDITORS.items()}
    pool = [invitation_create(session=session, actor="test", name=NEWCOMER).join_token for _ in range(24)]
    world = World(run=run, session=session, other=copies, others=[findings],
                  guest_code=NO_GUEST_CODE, join_pool=pool, all_join_tokens=list(pool),
                  standin=standin)
    world.tokens.update(join_A=tokens["A"], join_B=tokens["B"])
    world.personas["V"] = Persona("V", Client())
    judged_by_others(world, copies, "Kim", standin)
    judged_by_others(world, findings, "Lou")
    return world


def audited_labels(judge_pk) -> dict[str, str]:
    """An auditor's codes, each with the phase-2 canary label of the review it audits (the one
    reason the auditor may see, and only on that code's item page)."""
    return {code: f"review {review_pk} reason" for code, review_pk in
            Assignment.objects.filter(judge_id=judge_pk).values_list("code", "item__review_id")}


def drive_reasons(world, on_response):
    """The reasons session through its states, as `drive` does a session: a stranger and a host
    of other runs see the draft; auditor A joins by join link over HTTP (the join page, the
    welcome page, a reissued resume link) and is crawled before answering, after answering some,
    after answering all, after the phase-1 lock (phase 2, beside the copy's truth), with phase 2
    part answered, after both locks, after the session closes and after the reveal. Auditor B
    races ahead through the services (phase 1 locked, phase 2 drafts, every answer with a reason);
    the other sessions' judges go on judging meanwhile (more reasons, each a canary)."""
    session = world.session
    world.personas["O"] = github_host_signs_in(world, on_response)
    yield "draft", ["V", "O"]

    session_open(session=session, actor="test")
    world.reload()
    a = Persona("A", Client())
    token = world.tokens["join_A"]
    on_response(a, "GET", f"/join/{token}", a.client.get(f"/join/{token}"))
    joined = a.client.post(f"/join/{token}")
    on_response(a, "POST", f"/join/{token}", joined)
    assert joined.status_code == 302, joined.content[:300]
    welcome = a.client.get(joined["Location"])
    on_response(a, "GET", joined["Location"], welcome)
    a.judge_pk = Judge.objects.get(session=session, display_name=AUDITORS["A"]).pk
    first_resume = re.search(r"/resume/([A-Za-z0-9_\-]+)", welcome.content.decode()).group(1)
    a.resume_token = resume_token_reissue(judge=a.judge(), actor="test")
    world.tokens.update(used_join=token, revoked_resume=first_resume)
    resumed = a.client.post(f"/resume/{a.resume_token}")
    on_response(a, "POST", f"/resume/{a.resume_token}", resumed)
    assert resumed.status_code == 302
    world.personas["A"] = a
    items = len(codes_of(a.judge_pk))
    assert items == 5, items  # one review of each of the five reviewed copies
    b = join_token_exchange(token=world.tokens["join_B"]).judge
    service_verdicts_in(world, session, b, "Bob", 1)
    phase_lock(judge=b, phase=1)
    service_verdicts_in(world, session, b, "Bob", 2)
    yield "open, before answering", ["A", "V"]

    half = items // 2
    post_verdicts(a, world, "Ada", 1, range(half), on_response)
    judge = invite_and_join(world.other, name="CanaryLateJudgeMo JM9").judge
    service_verdicts_in(world, world.other, judge, "Mo", 1)
    yield "answering", ["A"]

    post_verdicts(a, world, "Ada", 1, range(half, items), on_response)
    yield "answered", ["A"]

    response = a.client.post(f"/s/{session.url_id}/lock/", {"confirm": "yes", "phase": "1"})
    on_response(a, "POST", f"/s/{session.url_id}/lock/", response)
    assert response.status_code == 302, response.content[:300]
    assert judge_phase(a.judge()) == 2
    yield "phase 2", ["A"]

    post_verdicts(a, world, "Ada", 2, range(half), on_response)
    yield "phase 2, answering", ["A"]

    post_verdicts(a, world, "Ada", 2, range(half, items), on_response)
    response = a.client.post(f"/s/{session.url_id}/lock/", {"confirm": "yes", "phase": "2"})
    on_response(a, "POST", f"/s/{session.url_id}/lock/", response)
    assert response.status_code == 302, response.content[:300]
    assert a.judge().phase2_locked_at and judge_phase(a.judge()) is None
    yield "locked", ["A"]

    session_close(session=session, actor="test")
    world.reload()
    yield "closed", ["A"]

    session_reveal(session=session, actor="test")
    world.reload()
    yield "revealed", ["A", "O"]


# --- Canaries ------------------------------------------------------------------------------------

def content_canaries(world) -> dict[str, str]:
    """Host-only text of the run: never in any byte a judge receives."""
    run = world.run
    found = {"run name": run.name}
    for b in run.builders.all():
        found.update({f"builder {b.bundle_id} id": b.bundle_id, f"builder {b.bundle_id} model": b.model,
                      f"builder {b.bundle_id} family": b.family})
    for c in run.copies.all():
        found[f"copy {c.bundle_id} id"] = c.bundle_id
        if c.defect:
            found[f"copy {c.bundle_id} defect note"] = c.defect
    for f in run.findings.all():
        found[f"finding {f.bundle_id} id"] = f.bundle_id
    for r in run.reviewers.all():
        found.update({f"reviewer {r.bundle_id} id": r.bundle_id, f"reviewer {r.bundle_id} family": r.family})
    for review in Review.objects.filter(run=run):
        if review.authorship_guess:
            found[f"authorship guess {review.pk}"] = review.authorship_guess
        # The exact request a review was made with, and why its seal failed (reasons_bundle).
        if review.request:
            found[f"review {review.pk} request"] = review.request
        if review.seal_reason:
            found[f"review {review.pk} seal reason"] = review.seal_reason
    # Reviewer conditions the host named (run/2); "clean", the format's default, names nothing.
    for condition in {run.default_condition, *Review.objects.filter(run=run)
                      .values_list("condition", flat=True)} - {"clean"}:
        found[f"condition {condition}"] = condition
    return found


def phase2_canaries(world) -> dict[str, str]:
    """What a judge may see only after their own phase-1 lock, and only on their item pages:
    reviewers' reasons (copies sessions) and reviewers' model names (where the host chose names).
    Elsewhere, and before that lock, they are canaries like the rest."""
    found = {f"reviewer {r.bundle_id} model": r.model for r in world.run.reviewers.all()}
    for review in Review.objects.filter(run=world.run).order_by("pk"):
        found[f"review {review.pk} reason"] = review.reason
    return found


def allowed_in_phase2(world) -> set[str]:
    if world.kind == SessionKind.ADJUDICATION:
        return set()  # an adjudicator sees no model's verdict or reviewer, locked or not
    if world.kind == SessionKind.REASONS:
        # An auditor sees the one review each item audits, in both phases, on that item's page
        # only (crawl_world: `audited_labels`); never a reviewer's model, nor another review.
        return set()
    allowed = set()
    if world.kind == SessionKind.COPIES:
        allowed |= {f"review {pk} reason"
                    for pk in Review.objects.filter(run=world.run).values_list("pk", flat=True)}
    if world.kind == SessionKind.PAIRS:
        # A pair's phase 2 shows each copy's reviews of the run's default condition only: a
        # reason given under another condition (told a verdict) stays a canary everywhere.
        allowed |= {f"review {pk} reason" for pk in Review.objects.filter(
            run=world.run, condition=world.run.default_condition).values_list("pk", flat=True)}
    if world.session.reviewer_display == "names":
        allowed |= {f"reviewer {r.bundle_id} model" for r in world.run.reviewers.all()}
    return allowed


def people_canaries(world, own_judge_pk=None, sessions=None) -> dict[str, str]:
    """Every other judge's name and reasons, in this session and the other one."""
    found = {}
    for judge in Judge.objects.filter(session__in=sessions or world.sessions):
        if judge.pk == own_judge_pk:
            continue
        if judge.display_name and judge.display_name != NEWCOMER:
            found[f"judge {judge.pk} name"] = judge.display_name
        if judge.github_login:
            found[f"judge {judge.pk} GitHub login"] = judge.github_login
            found[f"judge {judge.pk} GitHub id"] = str(judge.github_id)
        for index, reason in enumerate(sorted(world.reasons.get(judge.pk, ()))):
            found[f"judge {judge.pk} reason {index}"] = reason
        # Their task flags' reasons, as stored now (a later flag replaces a draft); a draft never
        # locked is labelled so (the report leaves it out).
        for index, (reason, locked) in enumerate(
                TaskFlag.objects.filter(judge=judge).order_by("pk").values_list("reason", "locked")):
            found[f"judge {judge.pk} task flag {index}{'' if locked else ' (draft)'}"] = reason
    return found


def id_canaries(world) -> dict[str, str]:
    """Every database id of the run's and the world's sessions' rows (all in distinctive ranges)."""
    sessions = world.sessions
    querysets = {
        Run: Run.objects.filter(pk=world.run.pk),
        Session: Session.objects.filter(pk__in=[s.pk for s in sessions]),
        Builder: Builder.objects.filter(run=world.run), Copy: Copy.objects.filter(run=world.run),
        Reviewer: Reviewer.objects.filter(run=world.run), Review: Review.objects.filter(run=world.run),
        Finding: Finding.objects.filter(run=world.run), Item: Item.objects.filter(session__in=sessions),
        Assignment: Assignment.objects.filter(judge__session__in=sessions),
        Verdict: Verdict.objects.filter(assignment__judge__session__in=sessions),
        Judge: Judge.objects.filter(session__in=sessions),
        Invitation: Invitation.objects.filter(session__in=sessions),
        Credential: Credential.objects.filter(session__in=sessions),
    }
    found = {}
    for model, queryset in querysets.items():
        for pk in queryset.values_list("pk", flat=True):
            assert pk > 60_000_000, f"{model.__name__} id {pk} is not in a distinctive range"
            found[f"{model._meta.db_table} id {pk}"] = str(pk)
    return found


# --- The crawl -------------------------------------------------------------------------------------

def judge_routes():
    return [r for r in walk_routes() if not r.route.startswith(EXCLUDED_PREFIXES)]


def fill_values(route, param, world, persona) -> list[tuple[str, str]] | None:
    """The values a visitor could put in a parameter: their own first, then other people's and
    unknown ones (the error pages). None: the crawl does not know how to fill it."""
    judge_pk = persona.judge_pk
    if param == "url_id":
        return [("own", world.session.url_id), ("other", world.other.url_id), ("unknown", UNKNOWN_URL_ID)]
    if param == "code":
        own = codes_of(judge_pk) if judge_pk else []
        others = [c for pk in Judge.objects.filter(session=world.session).exclude(pk=judge_pk)
                  .values_list("pk", flat=True) for c in codes_of(pk) if c not in own]
        if not others and world.kind == SessionKind.ADJUDICATION:
            # An adjudication has one judge: another person's code is one of the judges of the
            # sessions beside it (the same copies, judged by others).
            others = [c for pk in Judge.objects.filter(session__in=world.sessions[1:])
                      .order_by("pk").values_list("pk", flat=True) for c in codes_of(pk)
                      if c not in own]
        if world.kind == SessionKind.PAIRS and judge_pk:
            # A pair's frames are by its copies' codes; a pair's own code frames nothing, and a
            # copy's code is no item: each is tried where the other belongs (docs/threats.md 14e).
            copy_codes = copy_codes_of(judge_pk)
            if route.name == "judge_frame":
                own, others = copy_codes, [c for pk in Judge.objects.filter(
                    session=world.session).exclude(pk=judge_pk).values_list("pk", flat=True)
                    for c in copy_codes_of(pk) if c not in copy_codes]
                values = [("own", code) for code in own] + [("pair", codes_of(judge_pk)[0])]
            else:
                values = [("own", code) for code in own] + [("copy", copy_codes[0])]
        else:
            values = [("own", code) for code in own]
        if others:
            values.append(("other", others[0]))
        return values + [("unknown", UNKNOWN_CODE)]
    if param == "token" and route.name == "join":
        values = [("fresh", world.join_pool[0])]
        if "used_join" in world.tokens:
            values.append(("used", world.tokens["used_join"]))
        return values + [("unknown", UNKNOWN_TOKEN)]
    if param == "token" and route.name == "resume":
        values = [("own", persona.resume_token)] if persona.resume_token else []
        if "revoked_resume" in world.tokens:
            values.append(("revoked", world.tokens["revoked_resume"]))
        return values + [("unknown", UNKNOWN_TOKEN)]
    return None


def unfillable_routes(world) -> list[str]:
    persona = Persona("probe", Client())
    problems = []
    for route in judge_routes():
        if route.regex:
            problems.append(f"{route.route}: a regular-expression pattern")
        for param in route.params:
            if fill_values(route, param, world, persona) is None:
                problems.append(f"{route.route}: parameter {param!r}")
    return problems


def combos(route, world, persona):
    """(is own, values): every own combination, then each parameter varied alone to a foreign
    value from an own baseline, then everything unknown."""
    values = {p: fill_values(route, p, world, persona) for p in route.params}
    if not route.params:
        return [(True, {})]
    own = {p: [v for label, v in values[p] if label in ("own", "fresh")] for p in route.params}
    result = []
    if all(own.values()):
        result += [(True, dict(zip(route.params, combo, strict=True))) for combo in product(*own.values())]
    for param in route.params:
        baseline = {p: (own[p][0] if own[p] else values[p][-1][1]) for p in route.params}
        for label, value in values[param]:
            if label not in ("own", "fresh"):
                result.append((False, {**baseline, param: value}))
    result.append((False, {p: values[p][-1][1] for p in route.params}))
    unique = {}
    for is_own, combo in result:
        unique.setdefault(tuple(sorted(combo.items())), (is_own, combo))
    return list(unique.values())


def posts_for(route, world, persona, is_own, values):
    """(client kind, data, extra headers) of the POSTs made to a URL. "throwaway" is a fresh
    browser (a POST that would rebind the visitor's own browser to someone else)."""
    yield "own", {}, {}
    if route.name == "judge_item" and is_own:
        yield "own", {}, JSON_ACCEPT
        judge = persona.judge()
        phase = (judge_phase(judge) or 2) if judge else None
        verdict = Verdict.objects.filter(assignment__judge=judge, assignment__code=values["code"],
                                         phase=phase).first() if judge else None
        if verdict:
            replay = {"verdict": KEEP if verdict.kept else verdict.value, "phase": str(phase),
                      "reason": verdict.reason,
                      "seconds_spent": str(verdict.seconds_spent), "go": "stay"}
            yield "own", replay, {}
            yield "own", replay, JSON_ACCEPT
    if route.name == "guest":
        yield "own", {"code": WRONG_GUEST_CODE, "name": "Nosy Parker"}, {}
        yield "throwaway", {"code": world.guest_code, "name": NEWCOMER}, {}
    if route.name == "judge_lock":
        yield "own", {"confirm": "no"}, {}
    if route.name == "judge_task_flag":
        # The judge's stored flag on the item's task sent again (a replay: nothing changes, so
        # the item pages stay as they were crawled), and a flag with no kind (refused, stored
        # nowhere: the refusal page, which must carry nothing of the item). Where the session
        # does not collect flags, or the phase is locked, each is refused.
        judge = persona.judge() if is_own else None
        phase = (judge_phase(judge) or 2) if judge else 1
        stored = TaskFlag.objects.filter(
            judge=judge, phase=phase, task__in=Item.objects.filter(
                assignments__judge=judge, assignments__code=values["code"]).values("task")
        ).first() if judge else None
        if stored:
            replay = {"phase": str(phase), "kind": stored.kind, "severity": str(stored.severity),
                      "reason": stored.reason}
            yield "own", replay, {}
            yield "own", replay, JSON_ACCEPT
        no_kind = {"phase": str(phase), "kind": "", "severity": "1",
                   "reason": reason_for(persona.label, 96)}
        yield "own", no_kind, {}
        yield "own", no_kind, JSON_ACCEPT


@dataclass
class Crawl:
    world: World
    on_response: callable  # (persona, method, path, response) -> None
    statuses: dict = field(default_factory=dict)  # route -> set of statuses with own values
    pages: list = field(default_factory=list)  # (persona, path, response) of HTML pages
    plain: dict = field(default_factory=dict)  # path -> the visitor's own GET answered 200
    static: set = field(default_factory=set)
    generation: int = 0  # bumped whenever a request may have added rows (new ids, new people)

    def request(self, persona, client, method, path, data=None, extra=None):
        extra = extra or {}
        response = client.get(path, **extra) if method == "GET" else client.post(path, data or {}, **extra)
        self.on_response(persona, method, path, response)
        if response.get("Content-Type", "").startswith("text/html"):
            self.pages.append((persona, path, response))
        location = response.get("Location", "")
        if response.status_code in (301, 302, 303) and location.startswith("/"):
            followed = client.get(location)
            self.on_response(persona, "GET", location, followed)
            if followed.get("Content-Type", "").startswith("text/html"):
                self.pages.append((persona, location, followed))
        return response

    def run(self, persona):
        """Every judge-facing pattern with the visitor's own values (GET each; POST to the first
        two, where the handling cannot depend on which of the visitor's items it is) and with
        every foreign and unknown value (GET and POST)."""
        world = self.world
        self.pages.clear()
        self.plain.clear()
        for route in judge_routes():
            own_seen = 0
            for is_own, values in combos(route, world, persona):
                path = route.fill(values)
                response = self.request(persona, persona.client, "GET", path)
                if is_own:
                    own_seen += 1
                    self.statuses.setdefault(route.name, set()).add(response.status_code)
                    if response.status_code == 200:
                        self.plain[path] = response
                    if own_seen > 2:
                        continue
                for kind, data, extra in posts_for(route, world, persona, is_own, values):
                    if route.name in ("join", "resume") and is_own:
                        kind = "throwaway"  # would rebind the visitor's browser
                    if kind == "throwaway":
                        newcomer = Persona(NEWCOMER if route.name != "resume" else persona.label,
                                           Client(REMOTE_ADDR="198.51.100.99"),
                                           persona.judge_pk if route.name == "resume" else None)
                        self.generation += 1
                        last = Judge.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
                        self.request(newcomer, newcomer.client, "POST", path, data, extra)
                        self.generation += 1
                        # A join admits the newcomer: its pages (the welcome page links to its
                        # first item) are checked against its own codes.
                        made = (Judge.objects.filter(pk__gt=last, display_name=NEWCOMER)
                                .order_by("-pk").values_list("pk", flat=True).first())
                        if newcomer.judge_pk is None and made is not None:
                            newcomer.judge_pk = made
                        if route.name == "join":
                            world.join_pool.pop(0)  # used up (or refused) either way: next one
                    else:
                        response = self.request(persona, persona.client, "POST", path, data, extra)
                        if is_own and not data and not extra:
                            self.statuses.setdefault(route.name, set()).add(response.status_code)
        # Paths no pattern matches, and half paths.
        for path in ("/nonexistent/", "/s/", f"/s/{world.session.url_id}/i/", "/static/nonexistent.css",
                     f"/s/{world.session.url_id}/i/{UNKNOWN_CODE}/frame/extra"):
            self.request(persona, persona.client, "GET", path)


# --- Checks on what a judge's pages point at (case 10) -------------------------------------------

def is_github_authorize(value: str, path: str) -> bool:
    """The one off-site redirect a judge page may give: the GitHub sign-in page starting the POST
    sends the browser to GitHub's authorize page, for our callback, with an empty scope."""
    parts = urlsplit(value)
    github = settings.SOCIALACCOUNT_PROVIDERS["github"]["GITHUB_URL"]
    query = parse_qs(parts.query, keep_blank_values=True)
    return (resolve(urlsplit(path).path).url_name in ("github_judge_start", "github_judge_link")
            and value.startswith(f"{github}/login/oauth/authorize?")
            and query.get("scope") == [""]
            and query.get("redirect_uri") == ["http://testserver/accounts/github/login/callback/"]
            and set(query) == {"client_id", "redirect_uri", "scope", "response_type", "state"})


def link_problems(persona, path, response, world, *, urls=None, own_codes=None) -> list[str]:
    """Every URL in a judge page or a redirect: on this site, no digits-only path segment (no
    sequential id), and resolving to a judge page with only the judge's own URL id and codes
    (or to a static file, or to the hosts' sign-in page from the front page). `urls` (the page's,
    `page_urls`) and `own_codes` (the persona's, `codes_of`), where the caller has them already."""
    problems = []
    if own_codes is None:
        own_codes = set(codes_of(persona.judge_pk)) if persona.judge_pk else set()
    # A pairs judge's frames are by copy code, never by a pair's code (docs/threats.md 14e).
    copy_codes = (set(copy_codes_of(persona.judge_pk))
                  if persona.judge_pk and world.kind == SessionKind.PAIRS else set())
    if urls is None:
        urls = page_urls(body_of(response))
    urls = [value for _, _, value in urls]
    if response.get("Location"):
        urls.append(response["Location"])
    for value in urls:
        parts = urlsplit(value)
        if value.startswith("#"):
            continue
        if parts.scheme or parts.netloc:
            if "/resume/" in value:  # the resume link is absolute by design (SITE_URL)
                continue
            if value == response.get("Location") and is_github_authorize(value, path):
                continue
            problems.append(f"{path}: off-site or absolute URL {value!r}")
            continue
        segments = [s for s in parts.path.split("/") if s]
        for segment in segments:
            if segment.isdigit() and segment not in own_codes | copy_codes:
                problems.append(f"{path}: digits-only path segment in {value!r}")
        if parts.path.startswith(settings.STATIC_URL):
            continue
        try:
            match = resolve(parts.path)
        except Resolver404:
            problems.append(f"{path}: points at {value!r}, which is no page")
            continue
        if match.url_name == "account_login" and path == "/":
            continue
        if match.route.startswith(EXCLUDED_PREFIXES):
            problems.append(f"{path}: points at a non-judge page {value!r}")
        for key, arg in match.kwargs.items():
            if key == "url_id" and arg != world.session.url_id:
                problems.append(f"{path}: foreign URL id in {value!r}")
            if key == "code" and copy_codes and (arg in copy_codes) != (
                    match.url_name == "judge_frame"):
                problems.append(f"{persona.label} {path}: a pair's code and a copy's code "
                                f"mixed up in {value!r}")
            elif key == "code" and arg not in own_codes | copy_codes:
                problems.append(f"{persona.label} {path}: foreign code in {value!r}")
        if parts.query:
            problems.append(f"{path}: a query string in {value!r}")
    return problems


def static_urls(response, urls=None) -> set[str]:
    return {value for _, _, value in (page_urls(body_of(response)) if urls is None else urls)
            if urlsplit(value).path.startswith(settings.STATIC_URL) and not urlsplit(value).netloc}


def comparable(response) -> tuple:
    """Status, headers and body, with the values random by design replaced: CSRF tokens (masked
    afresh per response), the `Expires` time `never_cache` stamps, cookies (`Set-Cookie`)."""
    headers = sorted((k, "<TIME>" if k.lower() == "expires" else v) for k, v in response.items()
                     if k.lower() != "set-cookie")
    return response.status_code, headers, without_csrf(body_of(response))


# --- The tests -------------------------------------------------------------------------------------

@pytest.fixture
def canary_host(db):
    saved = move_ids_to_distinctive_ranges()
    yield a_host("canaryhost")
    restore_ids(saved)


def crawl_world(world, *, expect_2xx: set[str], driver=None):
    """Drive the world through its states (`driver`, by default `drive`), crawling at each;
    return every hit and problem."""
    hits, problems = [], []
    content = content_canaries(world)
    phase2 = phase2_canaries(world)
    allowed2 = allowed_in_phase2(world)
    scanners = {}
    crawl = None
    # judge pk -> phase 1 locked, their codes, and (a reasons session) the label of the review
    # each code audits (fixed while a state is crawled)
    locked = {}
    reasons = world.kind == SessionKind.REASONS

    def scanner_for(persona, path):
        if persona.judge_pk not in locked:
            judge = persona.judge()
            locked[persona.judge_pk] = (bool(judge and judge.phase1_locked_at),
                                        set(codes_of(judge.pk)) if judge else set(),
                                        audited_labels(judge.pk) if judge and reasons else {})
        phase1_locked, own_codes, audited = locked[persona.judge_pk]
        own_item = None
        try:
            match = resolve(urlsplit(path).path)
        except Resolver404:
            match = None
        if (match and match.url_name == "judge_item"
                and match.kwargs.get("url_id") == world.session.url_id
                and match.kwargs.get("code") in own_codes):
            own_item = match.kwargs["code"]
        may_see_phase2 = phase1_locked and own_item is not None
        # A reasons item's page shows the reason of the review it audits, in either phase; every
        # other review's reason (the copy's other reviewer's among them) stays a canary there.
        allowed_here = set(allowed2) if may_see_phase2 else set()
        if own_item in audited:
            allowed_here.add(audited[own_item])
        may_see_defects = bool(defect_notes) and on_scorecard(path)
        key = (persona.judge_pk, frozenset(allowed_here), may_see_defects,
               crawl.generation if crawl else -1)
        if key not in scanners:
            canaries = {**content, **people_canaries(world, persona.judge_pk), **id_canaries(world)}
            canaries.update({k: v for k, v in phase2.items() if k not in allowed_here})
            if may_see_defects:
                # After the reveal a judge's scorecard and card pages show the host's defect notes
                # (redacted as the copies were); the builders' names stay canaries there too.
                canaries = {k: v for k, v in canaries.items() if k not in defect_notes}
            scanners[key] = Scanner(canaries)
        return scanners[key]

    # Defect notes shown on scorecards: copies sessions whose judges get scorecards (issue 24 item 9).
    defect_notes = ({k for k in content if k.endswith("defect note")}
                    if world.kind == SessionKind.COPIES and world.session.scorecards else set())
    defect_probe = Scanner(shown_defect_notes(world)) if defect_notes else None
    seen_defects = set()

    def on_scorecard(path) -> bool:
        if world.session.state != "revealed":
            return False
        try:
            match = resolve(urlsplit(path).path)
        except Resolver404:
            return False
        return match.url_name in ("judge_scorecard", "judge_card")

    seen_phase2 = set()
    probe_labels = ({k for k in phase2 if k.startswith("review ")} if reasons else allowed2)
    probe = Scanner({k: v for k, v in phase2.items() if k in probe_labels}) if probe_labels else None

    def on_response(persona, method, path, response):
        found = scanner_for(persona, path).scan_response(response, f"{persona.label} {method} {path}")
        hits.extend(found)
        if probe and persona.judge_pk:
            seen_phase2.update(h.canary for h in probe.scan_response(response))
        if defect_probe and persona.judge_pk:
            seen_defects.update(h.canary for h in defect_probe.scan_response(response))

    def on_driver_response(persona, method, path, response):
        """The driver's own requests change state (locks, new rows): forget what was cached."""
        locked.clear()
        crawl.generation += 1
        on_response(persona, method, path, response)

    crawl = Crawl(world, on_response)
    for state, labels in (driver or drive)(world, on_driver_response):
        crawl.generation += 1
        locked.clear()
        for label in labels:
            persona = world.personas[label]
            crawl.run(persona)
            # Each page parsed once for both checks; each visitor's codes read once (no request
            # is made while the pages are checked, so nothing changes in between).
            codes = {}
            for page_persona, path, response in crawl.pages:
                urls = page_urls(body_of(response))
                if page_persona.judge_pk not in codes:
                    codes[page_persona.judge_pk] = (set(codes_of(page_persona.judge_pk))
                                                    if page_persona.judge_pk else set())
                problems.extend(f"[{state}] {p}" for p in link_problems(
                    page_persona, path, response, world, urls=urls,
                    own_codes=codes[page_persona.judge_pk]))
                crawl.static |= static_urls(response, urls)
            # Case 10: parameters naming hidden fields change nothing, byte for byte.
            for path, plain in crawl.plain.items():
                hidden = persona.client.get(path + HIDDEN_QUERY)
                if comparable(plain) != comparable(hidden):
                    again = persona.client.get(path)
                    what = ("changed with" if comparable(plain) == comparable(again)
                            else "is not stable without")
                    problems.append(f"[{state}] {label} {path}: the response {what} {HIDDEN_QUERY}")
    for url in sorted(crawl.static):
        response = world.personas["A"].client.get(url)
        assert response.status_code == 200, url
        hits.extend(Scanner({**content, **id_canaries(world)}).scan_response(response, url))
    assert crawl.static, "judge pages reference static files; none were found"
    reached = {name for name, statuses in crawl.statuses.items() if any(200 <= s < 400 for s in statuses)}
    missing = expect_2xx - reached
    assert not missing, f"never reached with the judge's own values: {sorted(missing)}"
    # The phase-2 canaries are real: the product shows each of them once allowed, and the scanner
    # finds it there (so their absence before the lock, and elsewhere, counts).
    if reasons:
        # Each auditor crawled sees the reason of every review they audit (and the hits above
        # hold that they see it nowhere else, and no other reason anywhere).
        allowed2 = {label for persona in world.personas.values() if persona.judge_pk
                    and Judge.objects.filter(pk=persona.judge_pk, session=world.session).exists()
                    for label in audited_labels(persona.judge_pk).values()}
    assert seen_phase2 == allowed2, sorted(allowed2 ^ seen_phase2)
    # Likewise the defect notes: shown (what of them is not a builder's name), so their absence
    # elsewhere counts.
    if defect_probe:
        assert seen_defects == set(shown_defect_notes(world)), seen_defects
    return hits, problems


def shown_defect_notes(world) -> dict[str, str]:
    """What a judge's scorecard shows of each defect note: the note, or, for the note naming its
    builder, the part before the name (the name is redacted)."""
    shown = {}
    for copy in world.run.copies.exclude(defect=""):
        if copy.bundle_id == DEFECT_NAMING["copy"] and copy.defect.startswith(DEFECT_NAMING["shown"] + ";"):
            shown[f"copy {copy.bundle_id} defect note, shown"] = DEFECT_NAMING["shown"]
        else:
            shown[f"copy {copy.bundle_id} defect note, shown"] = copy.defect
    return shown


ALL_JUDGE_ROUTES = {"home", "join", "resume", "resume_help", "judge_reissue", "guest", "judge_home",
                    "judge_welcome", "judge_item", "judge_instructions",
                    "github_judge_start", "github_judge_done", "github_judge_link",
                    "github_judge_link_done",
                    "judge_frame", "judge_lock", "judge_scorecard", "judge_card",
                    "judge_card_frame", "favicon", "judge_task_flag"}


def test_the_crawl_can_fill_every_judge_facing_url_pattern(canary_host):
    """A new judge URL pattern the crawl cannot fill fails here, instead of going unscanned."""
    world = build_world(canary_host, canary_bundle())
    assert unfillable_routes(world) == []
    routes = walk_routes()
    excluded = [r.route for r in routes if r.route.startswith(EXCLUDED_PREFIXES)]
    assert excluded and all(r.startswith(("host/", "accounts/")) for r in excluded)
    assert {r.name for r in judge_routes()} == ALL_JUDGE_ROUTES, (
        "the judge-facing URL patterns changed: check that the crawl's fillers and POSTs cover "
        "the new ones, then update this set")


# A copies session without scorecards is crawled by the twin tests below (case 12a), which
# compare every judge response of two worlds; this crawl takes the copies session with them, a
# superset of its pages.
@pytest.mark.parametrize("kind,display,scorecards", [
    ("copies", "letters", True),
    ("findings", "names", True),
], ids=["copies-letters-scorecards-defect-notes", "findings-names-scorecards"])
@override_settings(BLINDJUDGE_GUEST_ATTEMPTS=1000)
def test_no_canary_in_any_byte_a_judge_receives_in_any_state(canary_host, standin, kind, display,
                                                             scorecards):
    # A copies session with scorecards shows the host's defect notes after the reveal: one of them
    # names its builder (issue 24 item 9), and only what is not a name may reach the judge.
    world = build_world(canary_host, canary_bundle(), kind=kind, display=display, scorecards=scorecards,
                        standin=standin, defect_names_builder=kind == "copies" and scorecards)
    assert unfillable_routes(world) == []
    # The scorecard and its per-code card pages exist only where the host gave scorecards.
    scorecard_routes = {"judge_scorecard", "judge_card", "judge_card_frame"}
    expect = ALL_JUDGE_ROUTES if scorecards else ALL_JUDGE_ROUTES - scorecard_routes
    if kind != "copies":
        expect = expect - {"judge_task_flag"}  # task flags are collected in copies sessions only
    hits, problems = crawl_world(world, expect_2xx=expect)
    assert not hits, "canaries found:\n" + "\n".join(str(h) for h in hits[:40])
    assert not problems, "\n".join(problems[:40])


# Issue 29 item 5: an adjudicator learns nothing of builders, reviewers, truth or other judges.
# Every byte the adjudicator's browser gets, on every judge-facing URL in every state (before
# answering, while answering, all answered, locked, closed, revealed), holds no canary: builders'
# models, families and ids; reviewers' models (names are the reviewer display chosen), families
# and ids, their reviews' reasons (under either condition) and the conditions' names; defect notes;
# finding and copy ids (who raised a finding is reviewer ids); the names, GitHub logins and ids,
# verdict reasons and task flags' reasons of the judges of the copies and findings sessions on the
# same run; every database id. Nothing is allowed after the lock (`allowed_in_phase2` is empty
# for an adjudication). Truth labels and proposed verdicts are words the adjudicator's own
# choices use ("real", "false alarm"): the twin test below holds them (and who raised what).
# Every canary here is shown to fire on the unsafe page by
# test_positive_control_the_scanner_finds_every_adjudication_canary_on_an_unsafe_page.
ADJUDICATION_ROUTES = ALL_JUDGE_ROUTES - {"judge_scorecard", "judge_card", "judge_card_frame",
                                          "judge_task_flag"}


@override_settings(BLINDJUDGE_GUEST_ATTEMPTS=1000)
def test_no_canary_in_any_byte_an_adjudicator_receives_in_any_state(canary_host, standin):
    world = build_adjudication_world(canary_host, canary_bundle(adjudication=True), standin=standin)
    assert unfillable_routes(world) == []
    # The world is what the test says: unknown truth adjudicated beside two sessions judged by
    # others, with every kind of canary present.
    assert sorted(world.session.items.values_list("key", flat=True)) == [
        "copy:cCANARY02", "copy:cCANARY05", "finding:fCANARYF1", "finding:fCANARYF2",
        "finding:fCANARYF3"]
    assert {s.kind for s in world.sessions} == {"adjudication", "copies", "findings"}
    assert TaskFlag.objects.filter(judge__session=world.other).exists()
    content = content_canaries(world)
    assert {f"condition {c}" for c in ADJ_CONDITIONS} <= set(content)
    assert any(label.endswith("defect note") for label in content)
    hits, problems = crawl_world(world, expect_2xx=ADJUDICATION_ROUTES, driver=drive_adjudication)
    assert not hits, "canaries found:\n" + "\n".join(str(h) for h in hits[:40])
    assert not problems, "\n".join(problems[:40])
    # Every answer was saved with its reason and locked: the crawl saw the adjudication through.
    adjudicator = world.personas["A"].judge()
    assert Verdict.objects.filter(assignment__judge=adjudicator, locked=True).exclude(reason="")\
        .count() == 5


# Issue 30 item 6: an auditor of model reasons learns nothing of the reviewer, of the copy's other
# reviews, of builders or of other judges. Every byte the auditor's browser gets, on every
# judge-facing URL in every state (before answering, answering, answered, phase 2 after the
# phase-1 lock, phase 2 part answered, both locked, closed, revealed), holds no canary: the
# reviewers' models (names are the reviewer display chosen), families and ids, the conditions'
# names and authorship guesses; every review's reason but the one each item audits, which is
# allowed on that item's own page only (so the other review of a copy the auditor audits, and the
# reviews the other auditor audits, are canaries even there); builders' models, families and ids;
# defect notes; copy and finding ids; the names, GitHub logins and ids, reasons and task flags'
# reasons of the other auditor and of the judges of the copies and findings sessions on the same
# run; every database id. The audited reasons are planted canaries the crawl must find where they
# are allowed (so their absence elsewhere counts). The verdict audited and, in phase 2, the
# copy's truth are words: the twin test below holds them. Every canary here is shown to fire on
# the unsafe page by test_positive_control_the_scanner_finds_every_reasons_canary_on_an_unsafe_page.
REASONS_ROUTES = ADJUDICATION_ROUTES


@override_settings(BLINDJUDGE_GUEST_ATTEMPTS=1000)
def test_no_canary_in_any_byte_an_auditor_of_reasons_receives_in_any_state(canary_host, standin):
    world = build_reasons_world(canary_host, reasons_bundle(), standin=standin)
    assert unfillable_routes(world) == []
    assert {"sealed", "failed"} <= set(Review.objects.filter(run=world.run)
                                       .values_list("seal", flat=True))
    # The world is what the test says: every default-condition review audited, none of the other
    # condition, beside two unrevealed sessions judged by others, every kind of canary present.
    default, told = ADJ_CONDITIONS
    assert sorted(world.session.items.values_list("key", flat=True)) == sorted(
        f"review:{r.reviewer.bundle_id}:{r.copy.bundle_id}"
        for r in Review.objects.filter(run=world.run, condition=default))
    assert Review.objects.filter(run=world.run, condition=told).exists()
    assert {s.kind for s in world.sessions} == {"reasons", "copies", "findings"}
    assert TaskFlag.objects.filter(judge__session=world.other).exists()
    content = content_canaries(world)
    assert {f"condition {c}" for c in ADJ_CONDITIONS} <= set(content)
    assert any(label.endswith("defect note") for label in content)
    hits, problems = crawl_world(world, expect_2xx=REASONS_ROUTES, driver=drive_reasons)
    assert not hits, "canaries found:\n" + "\n".join(str(h) for h in hits[:40])
    assert not problems, "\n".join(problems[:40])
    auditor = world.personas["A"].judge()
    # A audits one review of a copy another reviewer reviewed too: that other reason was a canary
    # on A's own page of that copy, and was not found there.
    audited = set(Assignment.objects.filter(judge=auditor).values_list("item__review_id", flat=True))
    copies = set(Review.objects.filter(pk__in=audited).values_list("copy_id", flat=True))
    assert Review.objects.filter(copy_id__in=copies, condition=default).exclude(pk__in=audited)\
        .exists()
    # Both phases answered with reasons and locked: the crawl saw the audit through.
    assert Verdict.objects.filter(assignment__judge=auditor, locked=True).count() == 10
    assert auditor.phase2_locked_at is not None


# --- Positive controls ---------------------------------------------------------------------------

def revealed_world(host, standin, **options):
    world = build_world(host, canary_bundle(), standin=standin, **options)
    for _ in drive(world, lambda *args: None):
        pass
    return world


def unsafe_page_fires_on_every_canary(world, canaries):
    """The unsafe page of the world's session (under the unsafe URLconf), scanned for `canaries`:
    each is found in every form, and somewhere in every place (body, headers, cookies)."""
    scanner = Scanner(canaries)
    response = world.personas["A"].client.get(f"/unsafe/leak/{world.session.url_id}/")
    hits = scanner.scan_response(response)
    found = forms_found(hits)
    for label in canaries:
        value = canaries[label]
        expected = set(FORMS) - ({"core"} if core_of(value) in (None, value) else set())
        assert found.get(label, set()) >= expected, (label, value, expected - found.get(label, set()))
    wheres = {h.where for h in hits}
    for where in ("header ETag", "header Link", "header Content-Disposition", "header X-Leak-0",
                  "cookie leak", "cookie sealed", "body"):
        assert where in wheres, where
    return response


def test_positive_control_the_scanner_finds_every_canary_in_every_form_on_an_unsafe_page(canary_host,
                                                                                       standin):
    world = revealed_world(canary_host, standin)
    canaries = {**content_canaries(world), **phase2_canaries(world), **people_canaries(world),
                **id_canaries(world)}
    # The unsafe page echoes every host-only value of the run; the canaries are exactly those.
    planted = set(planted_values(world.session))
    assert set(canaries.values()) == planted, set(canaries.values()) ^ planted
    a = world.personas["A"]
    with override_settings(ROOT_URLCONF="tests.support.urls_unsafe"):
        response = unsafe_page_fires_on_every_canary(world, canaries)
        # The id check fires on the unsafe page's link to /host/sessions/<id>/ …
        problems = link_problems(a, "/unsafe/leak/", response, world)
        assert any("digits-only path segment" in p for p in problems), problems
        # … and the hidden-parameter check fires where a page sorts by a hidden field.
        plain = a.client.get(f"/unsafe/leak/{world.session.url_id}/")
        hidden = a.client.get(f"/unsafe/leak/{world.session.url_id}/" + HIDDEN_QUERY)
        assert comparable(plain) != comparable(hidden)


def test_positive_control_the_scanner_finds_every_adjudication_canary_on_an_unsafe_page(
        canary_host, standin):
    """The adjudication crawl's canaries (those of the run/2 bundle: reviewer conditions, reviews
    under two conditions; the judges of three sessions, one by GitHub, with task flags), every
    one of them, in every form, as the crawl's scanner sees them: each detector the adjudication
    test relies on fires."""
    world = build_adjudication_world(canary_host, canary_bundle(adjudication=True), standin=standin)
    for _ in drive_adjudication(world, lambda *args: None):
        pass
    canaries = {**content_canaries(world), **phase2_canaries(world), **people_canaries(
        world, world.personas["A"].judge_pk), **id_canaries(world)}
    assert {f"condition {c}" for c in ADJ_CONDITIONS} <= set(canaries)
    assert any(" task flag " in label for label in canaries)
    assert any(label.endswith("GitHub login") for label in canaries)
    # The unsafe page echoes every host-only value of the run; the canaries are those, less what
    # is the adjudicator's own (their name and reasons).
    own = Judge.objects.get(pk=world.personas["A"].judge_pk)
    mine = {own.display_name, *Verdict.objects.filter(assignment__judge=own).values_list(
        "reason", flat=True)}
    planted = set(planted_values(world.session))
    assert set(canaries.values()) == planted - mine, set(canaries.values()) ^ (planted - mine)
    with override_settings(ROOT_URLCONF="tests.support.urls_unsafe"):
        unsafe_page_fires_on_every_canary(world, canaries)


def test_positive_control_the_scanner_finds_every_reasons_canary_on_an_unsafe_page(
        canary_host, standin):
    """The reasons crawl's canaries (the run/2 bundle's reviewer conditions and reviews, the
    audited reasons among them; the other auditor; the judges of the copies and findings sessions,
    one by GitHub, with task flags), every one of them, in every form, as the crawl's scanner sees
    them: each detector the reasons crawl relies on fires, the audited reasons' too (the crawl
    allows each only on its own item page)."""
    world = build_reasons_world(canary_host, reasons_bundle(), standin=standin)
    for _ in drive_reasons(world, lambda *args: None):
        pass
    own = world.personas["A"].judge_pk
    canaries = {**content_canaries(world), **phase2_canaries(world),
                **people_canaries(world, own), **id_canaries(world)}
    assert {f"condition {c}" for c in ADJ_CONDITIONS} <= set(canaries)
    assert set(audited_labels(own).values()) <= set(canaries)
    assert any(label.endswith(" request") for label in canaries)
    assert any(label.endswith(" seal reason") for label in canaries)
    assert any(" task flag " in label for label in canaries)
    assert any(label.endswith("GitHub login") for label in canaries)
    other_auditor = Judge.objects.get(session=world.session, display_name=AUDITORS["B"])
    assert f"judge {other_auditor.pk} name" in canaries
    mine = {JUDGE_NAMES["A"], *Verdict.objects.filter(assignment__judge_id=own).values_list(
        "reason", flat=True)}
    planted = set(planted_values(world.session))
    assert set(canaries.values()) == planted - mine, set(canaries.values()) ^ (planted - mine)
    with override_settings(ROOT_URLCONF="tests.support.urls_unsafe"):
        unsafe_page_fires_on_every_canary(world, canaries)


def test_positive_control_the_hosts_revealed_report_holds_every_content_canary(canary_host, standin):
    world = revealed_world(canary_host, standin)
    report = build_report(world.session)
    # The report names a GitHub judge by login; GitHub's numeric id stays in the database.
    # A task flag never locked is left out of the report (reports.sections.task_flags).
    people = {label: value for label, value in people_canaries(world, sessions=[world.session]).items()
              if not label.endswith("GitHub id") and not label.endswith("(draft)")}
    assert any(" task flag " in label for label in people), "no locked task flag to look for"
    assert any(label.endswith("GitHub login") for label in people)
    canaries = {**content_canaries(world), **phase2_canaries(world), **people,
                "run id": str(world.run.pk), "session id": str(world.session.pk)}
    scanner = Scanner(canaries)
    hits = scanner.scan_bytes(to_json(report), "report.json")
    hits += scanner.scan_bytes(to_csv(report).encode("utf-8"), "report.csv")
    hits += scanner.scan_bytes(json.dumps(report).encode("ascii"), "report ascii json")
    found = forms_found(hits)
    missing = sorted(label for label in canaries if "raw" not in found.get(label, set()))
    assert not missing, missing
    # The ASCII-only JSON escapes every non-ASCII canary: the scanner finds those as JSON escapes.
    escaped = [label for label, value in canaries.items() if not value.isascii()]
    assert escaped and all("json" in found[label] for label in escaped)


# --- Case 12a: twins that differ only in truth labels, or only in builder identities ------------

class Normaliser:
    """The values random by design, each replaced by a placeholder; nothing else is touched:

    - the session URL ids (`Session.url_id`, always from the OS CSPRNG, pinned seed or not);
    - CSRF tokens in forms (masked afresh in every response);
    - join tokens (in join URLs, and in the join page's form) and resume tokens (in resume URLs
      and the resume link shown once);
    - the guest code (OS CSPRNG; typed by the guest, shown back in the field when refused);
    - the OAuth `state` in the GitHub sign-in redirect (random per sign-in);
    - commitment hashes (salted, and the committed payload holds the session URL id and, by
      design, the builder ids);
    - elsewhere: cookies (`Set-Cookie`: session and CSRF cookies) are left out of the comparison,
      and the `Expires` header (the time `never_cache` stamps) is replaced by `<TIME>`;
    - the time a save answers with (`saved_at`, the time of the request).

    Not normalised, so it must match: the protocol hash, item codes, orders, positions, counts,
    texts, and the length of everything.
    """

    def __init__(self, world: World):
        self.world = world
        self.refresh()

    def refresh(self):
        world = self.world
        pairs = [(world.session.url_id, "<SESSION_URL_ID>"), (world.other.url_id, "<OTHER_URL_ID>"),
                 (world.guest_code, "<GUEST_CODE>")]
        for key, token in world.tokens.items():
            pairs.append((token, "<JOIN_TOKEN>" if "join" in key else "<RESUME_TOKEN>"))
        pairs += [(token, "<JOIN_TOKEN>") for token in world.all_join_tokens]
        pairs += [(p.resume_token, "<RESUME_TOKEN>") for p in world.personas.values() if p.resume_token]
        pairs += [(c, "<COMMITMENT>") for c in Judge.objects.filter(
            session__in=[world.session, world.other]).values_list("commitment_sha256", flat=True)]
        self.pairs = [(value.encode(), placeholder.encode()) for value, placeholder in pairs]

    def __call__(self, text: bytes) -> bytes:
        text = without_csrf(text)
        for value, placeholder in self.pairs:
            text = text.replace(value, placeholder)
        text = re.sub(rb"([?&]state=)[A-Za-z0-9_\-]+", rb"\1<OAUTH_STATE>", text)
        text = re.sub(rb'"saved_at": "[^"]+"', b'"saved_at": "<TIME>"', text)
        return re.sub(rb"/resume/[A-Za-z0-9_\-]{43}", b"/resume/<RESUME_TOKEN>", text)


def twin_transcript(host, bundle, standin, *, build=None, driver=None, normalise_more=None,
                    **options) -> tuple[list, World]:
    """Every judge-facing response in every state, as (who, method, path, status, headers, body),
    normalised; cookies (Set-Cookie: the session and CSRF cookies) left out; each state opened
    by a marker entry ("state", its name, "", 0, (), b""). `build` and `driver` (by default
    `build_world` and `drive`): the world and how it is driven; `normalise_more`: (bytes, world)
    -> bytes, applied to every body after the Normaliser (what a twin test allows to differ, by
    name)."""
    world = (build or build_world)(host, bundle, seed=SEED, standin=standin, **options)
    normalise = Normaliser(world)
    transcript = []

    def on_response(persona, method, path, response):
        # What the normaliser replaces changes only with a POST that was accepted (a join, a
        # resume, a guest code; a refused one changes none of it) or between states (the
        # driver's own steps refresh it below); a value it missed would make the twins differ,
        # never hide a difference.
        if method == "POST" and response.status_code < 400:
            normalise.refresh()
        headers = tuple((k, "<TIME>" if k.lower() == "expires" else
                         normalise(v.encode("latin-1")).decode("latin-1"))
                        for k, v in sorted(response.items()) if k.lower() != "set-cookie")
        body = normalise(body_of(response))
        transcript.append((persona.label, method, normalise(path.encode()).decode(),
                           response.status_code, headers,
                           normalise_more(body, world) if normalise_more else body))

    def on_driver_response(persona, method, path, response):
        normalise.refresh()  # the driver changes state between requests (service calls)
        on_response(persona, method, path, response)

    crawl = Crawl(world, on_response)
    for state, labels in (driver or drive)(world, on_driver_response):
        normalise.refresh()
        transcript.append(("state", state, "", 0, (), b""))
        for label in labels:
            if label != "R":  # a removed judge gets 404s from the guard, whatever the bundle
                crawl.run(world.personas[label])
    return transcript, world


def unsafe_pages(worlds, page: str) -> list[list[bytes]]:
    """For each world, judge A's test-only unsafe `page` (tests/support/urls_unsafe.py) of each of
    their codes, normalised as the transcripts are: what a twin comparison's positive control
    must find different."""
    with override_settings(ROOT_URLCONF="tests.support.urls_unsafe"):
        pages = []
        for world in worlds:
            a = world.personas["A"]
            normalise = Normaliser(world)
            pages.append([normalise(a.client.get(f"/unsafe/s/{world.session.url_id}/i/{code}/{page}").content)
                          for code in codes_of(a.judge_pk)])
    return pages


def first_difference(left, right) -> str:
    if len(left) != len(right):
        return f"{len(left)} responses against {len(right)}"
    for one, two in zip(left, right, strict=True):
        if one != two:
            for index, name in enumerate(("who", "method", "path", "status", "headers", "body")):
                if one[index] != two[index]:
                    detail = (one[index], two[index])
                    if name == "body":
                        at = next(i for i, (x, y) in enumerate(zip(one[5] + b"\0", two[5] + b"\1",
                                                                   strict=False)) if x != y)
                        detail = (one[5][max(0, at - 80):at + 80], two[5][max(0, at - 80):at + 80])
                    return f"{one[0]} {one[1]} {one[2]}: {name} differs: {detail}"
    return ""


@override_settings(BLINDJUDGE_GUEST_ATTEMPTS=1000)
def test_case_12a_truth_twins_give_byte_identical_judge_responses(canary_host, standin):
    left, left_world = twin_transcript(canary_host, canary_bundle(), standin, kind="copies")
    right, right_world = twin_transcript(canary_host, canary_bundle(truth_twin=True), standin,
                                         kind="copies")
    assert len(left) > 500
    # The twins really differ in truth, and only there.
    assert [c.truth for c in left_world.run.copies.order_by("position")] != [
        c.truth for c in right_world.run.copies.order_by("position")]
    # The protocol hash is not normalised: it holds no truth, so the twins share it.
    assert left_world.session.protocol_sha256 == right_world.session.protocol_sha256
    assert any(left_world.session.protocol_sha256.encode() in entry[5] for entry in left)
    assert first_difference(left, right) == ""
    # Positive control: the comparison fires on a page whose length follows the truth label.
    left_pages, right_pages = unsafe_pages((left_world, right_world), "truth")
    assert left_pages != right_pages


@override_settings(BLINDJUDGE_GUEST_ATTEMPTS=1000)
def test_case_12a_builder_twins_give_byte_identical_judge_responses(canary_host, standin):
    options = {"kind": "findings", "display": "names", "scorecards": True}
    left, left_world = twin_transcript(canary_host, canary_bundle(), standin, **options)
    right, right_world = twin_transcript(canary_host, canary_bundle(builder_twin=True), standin,
                                         **options)
    assert len(left) > 500
    assert set(left_world.run.builders.values_list("model", flat=True)).isdisjoint(
        right_world.run.builders.values_list("model", flat=True))
    # Commitments differ (they cover builder ids, salted): normalised, listed in Normaliser.
    assert left_world.session.protocol_sha256 == right_world.session.protocol_sha256
    assert first_difference(left, right) == ""
    # Positive control: a page that prints the builders differs between these twins.
    with override_settings(ROOT_URLCONF="tests.support.urls_unsafe"):
        pages = [Normaliser(w)(w.personas["A"].client.get(f"/unsafe/leak/{w.session.url_id}/").content)
                 for w in (left_world, right_world)]
    assert pages[0] != pages[1]


@override_settings(BLINDJUDGE_GUEST_ATTEMPTS=1000)
def test_case_12a_by_task_twins_give_byte_identical_judge_responses(canary_host, standin):
    """A by-task session over two tasks, allocated (3 of 6 items per judge: one whole task each)
    and interleaved: twins differing in builder names, families and ids and in every truth label
    get the same pages, the same allocation and the same order."""
    options = {"kind": "copies", "by_task": True, "items_per_judge": 3}
    left, left_world = twin_transcript(canary_host, canary_bundle(two_tasks=True), standin,
                                       **options)
    right, right_world = twin_transcript(
        canary_host, canary_bundle(two_tasks=True, builder_twin=True, truth_twin=True), standin,
        **options)
    assert len(left) > 500
    assert left_world.session.by_task and left_world.run.tasks.count() == 2
    assert set(left_world.run.builders.values_list("model", flat=True)).isdisjoint(
        right_world.run.builders.values_list("model", flat=True))
    assert [c.truth for c in left_world.run.copies.order_by("position")] != [
        c.truth for c in right_world.run.copies.order_by("position")]

    def allocation(world):
        return [list(Assignment.objects.filter(judge__session=world.session, judge__number=n)
                     .order_by("position").values_list("item__key", "item__task__bundle_id", "code"))
                for n in range(1, world.session.joined_judges + 1)]

    left_allocation = allocation(left_world)
    assert left_allocation == allocation(right_world)
    # Each judge holds one whole task (three copies, one per builder), as the setting says.
    assert all(len(items) == 3 and len({task for _, task, _ in items}) == 1
               for items in left_allocation)
    assert {items[0][1] for items in left_allocation} == {"tADD", "tSUM"}
    assert left_world.session.protocol_sha256 == right_world.session.protocol_sha256
    assert first_difference(left, right) == ""


@override_settings(BLINDJUDGE_GUEST_ATTEMPTS=1000)
def test_case_12a_adjudication_twins_give_byte_identical_adjudicator_responses(canary_host, standin):
    """Issue 29 item 5: an adjudicator learns nothing of truth, of builders, of the findings'
    proposed verdicts or of who raised them. Twins of the adjudication bundle differing in every
    truth label the tests settled (the adjudicated finding fCANARYF1 and copy cCANARY02 among
    them), in builder names, families and ids, and in every finding's proposed verdict and its
    raisers give the adjudicator (and the stranger, and the host of other runs) the same bytes in
    every state. The twin comparison is shown to fire on a truth-dependent page below, as in the
    copies twins."""
    options = {"build": build_adjudication_world, "driver": drive_adjudication}
    left, left_world = twin_transcript(canary_host, canary_bundle(adjudication=True), standin,
                                       **options)
    right, right_world = twin_transcript(
        canary_host, canary_bundle(adjudication=True, truth_twin=True, builder_twin=True,
                                   proposal_twin=True), standin, **options)
    assert len(left) > 300
    # The twins really differ where they say, on the adjudicator's own items too.
    left_items, right_items = ([(i.key, i.copy.truth, i.finding.truth if i.finding else None,
                                 i.finding.proposed_verdict if i.finding else None,
                                 sorted(FindingRaise.objects.filter(finding=i.finding)
                                        .values_list("reviewer__bundle_id", "condition"))
                                 if i.finding else None)
                                for i in w.session.items.order_by("key")]
                               for w in (left_world, right_world))
    assert [i[0] for i in left_items] == [i[0] for i in right_items]
    for column in (1, 2, 3, 4):
        assert [i[column] for i in left_items] != [i[column] for i in right_items], column
    assert set(left_world.run.builders.values_list("model", flat=True)).isdisjoint(
        right_world.run.builders.values_list("model", flat=True))
    assert left_world.session.protocol_sha256 == right_world.session.protocol_sha256
    assert first_difference(left, right) == ""
    # Positive control: the comparison fires on a page whose length follows the truth label of
    # the adjudicator's copy (cCANARY02: seeded_defect in one twin, known_good in the other).
    left_pages, right_pages = unsafe_pages((left_world, right_world), "truth")
    assert left_pages != right_pages


KNOWN_TRUTH = re.compile(rb"Known truth: <strong>([^<]*)</strong>")


@override_settings(BLINDJUDGE_GUEST_ATTEMPTS=1000)
def test_case_12a_reasons_twins_give_byte_identical_auditor_responses(canary_host, standin):
    """Issue 30 item 6: an auditor of model reasons learns nothing of builders, of the reviewer
    (model, family), of the copy's other reviews or of the reviews under another condition, and
    nothing of truth before their phase-1 lock. Twins of the canary bundle differing in builder
    names, families and ids, in reviewer models and families, in the verdict, reason and
    authorship guess of every review the auditor does not audit (the other review of a copy they
    audit among them, and every review under the second condition), and in every truth label
    the tests settled, give the auditor (and the stranger, and the host of other runs) the same
    bytes in every state, save one: phase 2 shows the audited copy's known truth in words, by
    design (the report measures whether knowing it changes what people call grounded). That
    line alone is set aside by name (`Known truth: <strong>…</strong>`), and it is shown to be
    absent from every response before the phase-1 lock, present after it, and different between
    the twins (so setting it aside hides a real difference, and only that one)."""
    shown = {"left": [], "right": []}

    def truth_set_aside(side):
        def replace(body: bytes, world) -> bytes:
            shown[side].extend(KNOWN_TRUTH.findall(body))
            if world.session.protocol_sha256:
                body = body.replace(world.session.protocol_sha256.encode(), b"<PROTOCOL>")
            return KNOWN_TRUTH.sub(b"Known truth: <strong><TRUTH></strong>", body)
        return replace

    left, left_world = twin_transcript(canary_host, reasons_bundle(), standin,
                                       build=build_reasons_world, driver=drive_reasons,
                                       normalise_more=truth_set_aside("left"))
    audited = set(Assignment.objects.filter(judge_id=left_world.personas["A"].judge_pk)
                  .values_list("item__review__reviewer__bundle_id", "item__review__copy__bundle_id"))
    twin = reasons_twin(reasons_bundle(truth_twin=True, builder_twin=True, seal_twin=True),
                        audited=audited)
    right, right_world = twin_transcript(canary_host, twin, standin, build=build_reasons_world,
                                         driver=drive_reasons,
                                         normalise_more=truth_set_aside("right"))
    assert len(left) > 300
    # The auditor audits the same reviews in both twins, and everything else differs.
    assert audited == set(Assignment.objects.filter(judge_id=right_world.personas["A"].judge_pk)
                          .values_list("item__review__reviewer__bundle_id",
                                       "item__review__copy__bundle_id"))
    assert len(audited) == 5 and len({copy for _, copy in audited}) == 5

    def reviews(world):
        return {(r.reviewer.bundle_id, r.copy.bundle_id, r.condition): (r.verdict, r.reason)
                for r in Review.objects.filter(run=world.run).select_related("reviewer", "copy")}

    left_reviews, right_reviews = reviews(left_world), reviews(right_world)
    assert left_reviews.keys() == right_reviews.keys()
    default = ADJ_CONDITIONS[0]
    for key, review in left_reviews.items():
        assert (review == right_reviews[key]) == (key[2] == default and key[:2] in audited), key
    # Every review's seal differs between the twins, the audited ones' too.
    seals = [dict(((r.reviewer.bundle_id, r.copy.bundle_id, r.condition), r.seal)
                  for r in Review.objects.filter(run=w.run).select_related("reviewer", "copy"))
             for w in (left_world, right_world)]
    assert all(seals[0][key] != seals[1][key] for key in seals[0]), seals
    # The copy's other review, where an audited copy has one, differs between the twins.
    assert any(key[2] == default and key[:2] not in audited
               and key[1] in {copy for _, copy in audited} for key in left_reviews)
    for field_name in ("model", "family"):
        assert set(left_world.run.reviewers.values_list(field_name, flat=True)).isdisjoint(
            right_world.run.reviewers.values_list(field_name, flat=True))
    assert set(left_world.run.builders.values_list("model", flat=True)).isdisjoint(
        right_world.run.builders.values_list("model", flat=True))
    audited_copies = {copy for _, copy in audited}
    truths = [{c.bundle_id: c.truth for c in w.run.copies.all() if c.bundle_id in audited_copies}
              for w in (left_world, right_world)]
    assert sum(truths[0][c] != truths[1][c] for c in audited_copies) >= 3, truths
    # The protocol (shown to judges by its hash) freezes what each item audits: the review's
    # verdict and its reason's hash (judging.services.sessions.protocol_of). So it differs, by
    # design, where the twins differ in reviews other auditors audit, and nowhere else: the hash
    # is set aside above like the commitments, and the documents are compared here. (It is an
    # unsalted hash of a document holding host-only item keys and the hashes of reasons the
    # auditor never reads: nothing in it can be checked against a guess.)
    left_protocol, right_protocol = (w.session.protocol for w in (left_world, right_world))
    assert left_world.session.protocol_sha256 != right_world.session.protocol_sha256
    own_keys = {f"review:{reviewer}:{copy}" for reviewer, copy in audited}
    differing = [l_item["key"] for l_item, r_item in zip(left_protocol["items"],
                                                          right_protocol["items"], strict=True)
                 if l_item != r_item]
    assert differing and not own_keys & set(differing)
    assert all(l_item["review"] != r_item["review"] and {**l_item, "review": None}
               == {**r_item, "review": None}
               for l_item, r_item in zip(left_protocol["items"], right_protocol["items"], strict=True)
               if l_item["key"] in differing)
    assert {**left_protocol, "items": None} == {**right_protocol, "items": None}
    # A page showing the truth line is as long as its words: its Content-Length is set aside
    # with them (and only on such a page).
    left, right = ([(*entry[:4], tuple((k, "<LENGTH>" if k == "Content-Length"
                                         and b"<TRUTH>" in entry[5] else v)
                                        for k, v in entry[4]), entry[5]) for entry in side]
                   for side in (left, right))
    assert first_difference(left, right) == ""
    # The truth line: never before the phase-1 lock, shown after it, and not the same words.
    states = [entry[1] for entry in left if entry[0] == "state"]
    lock = next(i for i, entry in enumerate(left) if entry[:2] == ("state", "phase 2"))
    assert states[:states.index("phase 2")] == ["draft", "open, before answering", "answering",
                                                "answered"]
    assert not any(b"Known truth" in entry[5] for entry in left[:lock])
    assert any(b"<TRUTH>" in entry[5] for entry in left[lock:])
    assert shown["left"] and len(shown["left"]) == len(shown["right"])
    assert shown["left"] != shown["right"]
    assert set(shown["left"]) | set(shown["right"]) <= {
        label.encode() for label in TRUTH_LABELS.values()}
    # Positive control: without the truth set aside, the comparison fires on the auditor's
    # pages of phase 2 (as it does on the unsafe page whose length follows the truth label).
    left_pages, right_pages = unsafe_pages((left_world, right_world), "truth")
    assert left_pages != right_pages
