"""A model-matrix run as a host publishes one: the world the HTML report is looked at in.

Four builders with long model names (the plots' labels must fit), each building ten tasks in five
clusters, plus two controls each for two of them; three model reviewers (two of a builder's
family), one of them asked again told a prior "PASS"; five invited judges and a guest judging every
copy in both phases; a preregistration with decision rules; a redaction that hits one builder
only; a truth label corrected after the reveal. Every verdict and truth label is drawn from a
hash of its names, so the world replays exactly (with a pinned draw seed, byte for byte).

Used by tests/e2e/test_report_pages_in_chromium.py (screenshots, label boxes, axe-core) and
tests/reports/test_report_html.py. The figures here are not checked by hand: the scripted worlds
(test_report_scripted.py, test_report.py) do that.
"""

import hashlib
import json

from judging.models import Session
from judging.services import (
    blinding_dismiss,
    guest_join,
    guests_configure,
    phase_lock,
    redactions_accept,
    session_create,
    session_open,
    truth_correct,
)
from tests.support.verdicts import verdict_record
from tests.worlds import a_run, advance, invite_and_join

DRAW_SEED = "ab12" * 16
BUILDERS = [
    {"id": "b1", "model": "claude-3-5-sonnet-20241022", "family": "Anthropic"},
    {"id": "b2", "model": "gpt-4o-2024-08-06", "family": "OpenAI"},
    {"id": "b3", "model": "Qwen2.5-Coder-32B-Instruct", "family": "Alibaba"},
    {"id": "b4", "model": "Meta-Llama-3.1-405B-Instruct-Turbo", "family": "Meta"},
]
PASS_RATE = {"b1": 0.8, "b2": 0.6, "b3": 0.35, "b4": 0.5}  # the chance a copy passes its tests
REVIEWERS = [
    {"id": "r1", "model": "qwen3-1.7b", "family": "Alibaba"},
    {"id": "r2", "model": "gpt-4o-mini-2024-07-18", "family": "OpenAI"},
    {"id": "r3", "model": "mistral-large-2411", "family": "Mistral"},
]
REVIEWER_ACCURACY = {"r1": 0.65, "r2": 0.85, "r3": 0.75}
TASKS = [
    ("t01", "Parse an ISO 8601 date", "dates"), ("t02", "Add days across a DST change", "dates"),
    ("t03", "Split a CSV line with quotes", "text"), ("t04", "Wrap text at a width", "text"),
    ("t05", "Merge overlapping intervals", "intervals"),
    ("t06", "Find free slots in a calendar", "intervals"),
    ("t07", "LRU cache with a size limit", "caches"), ("t08", "Memoise with expiry", "caches"),
    ("t09", "Retry with exponential backoff", "network"),
    ("t10", "Rate-limit requests per client", "network"),
]
JUDGES = ["Ada Lovelace", "Grace Hopper", "Edsger Dijkstra", "Barbara Liskov", "Donald Knuth"]
PREREG = """Blind judges will rank claude-3-5-sonnet-20241022 above gpt-4o-2024-08-06; seeing the
model reviewers will raise recall without moving judges away from truth.

```rules
[{"name": "herding", "metric": "delta_fleiss_kappa", "op": ">=", "threshold": 0.1,
  "and": {"metric": "delta_recall", "op": "<=", "threshold": 0.0}},
 {"name": "models help recall", "metric": "delta_recall", "op": ">=", "threshold": 0.05,
  "and": {"metric": "shift_away_from_truth", "op": "<=", "threshold": 0.1}},
 {"name": "b1 beats b2", "metric": "builder_difference", "builders": ["b1", "b2"], "op": ">",
  "threshold": 0}]
```
"""


def chance(*names) -> float:
    """A number in [0, 1) drawn from the names, the same on every run."""
    digest = hashlib.sha256("/".join(names).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64


def copies() -> list[dict]:
    rows = []
    for builder in BUILDERS:
        b = builder["id"]
        for task, title, _ in TASKS:
            passes = chance("truth", b, task) < PASS_RATE[b]
            content = f"# {title}\ndef solve(value):\n    return value  # {b} {task}\n"
            if b == "b1" and task in ("t01", "t05"):
                content = "# Written with Claude.\n" + content  # redacted: b1 only
            rows.append({"id": f"{b}-{task}", "task": task, "builder": b, "format": "text",
                         "content": content, "truth": "tests_pass" if passes else "tests_fail"})
        if b in ("b1", "b2"):
            rows.append({"id": f"{b}-good", "task": "t01", "builder": b, "format": "text",
                         "content": f"def solve(value):\n    return value  # {b} control\n",
                         "truth": "known_good"})
            rows.append({"id": f"{b}-bad", "task": "t01", "builder": b, "format": "text",
                         "content": f"def solve(value):\n    return -value  # {b} control\n",
                         "truth": "seeded_defect", "defect": "negates the value"})
    return rows


def right_verdict(truth: str) -> str:
    return "pass" if truth in ("tests_pass", "known_good") else "fail"


def wrong(verdict: str) -> str:
    return "fail" if verdict == "pass" else "pass"


def reviews(rows: list[dict]) -> list[dict]:
    out = []
    family = {b["id"]: b["family"] for b in BUILDERS}
    for copy in rows:
        right = right_verdict(copy["truth"])
        for reviewer in REVIEWERS:
            r = reviewer["id"]
            verdict = right if chance("review", r, copy["id"]) < REVIEWER_ACCURACY[r] else wrong(right)
            if r == "r3" and chance("abstain", copy["id"]) < 0.1:
                verdict = "abstain"
            review = {"reviewer": r, "copy": copy["id"], "verdict": verdict,
                      "reason": f"{reviewer['model']} read {copy['id']}: the edge cases "
                                f"{'hold' if verdict == 'pass' else 'break'}."}
            if r == "r1" and chance("guess", copy["id"]) < 0.4:
                guessed = BUILDERS[int(chance("who", copy["id"]) * 4)]
                review["authorship_guess"] = (family[copy["builder"]] if chance("sure", copy["id"]) < 0.5
                                              else guessed["model"])
            out.append(review)
            if r == "r1":  # asked again, told that a prior reviewer passed it
                told = "pass" if chance("told", copy["id"]) < 0.6 else verdict
                out.append({**review, "condition": "told_pass", "verdict": told,
                            "reason": "The prior reviewer passed it; " + review["reason"]})
    return out


def bundle() -> dict:
    rows = copies()
    return {
        "format": "blindjudge.run/2",
        "run": {"name": "Ten utility tasks, four builders", "default_condition": "clean",
                "abstain_scoring": "not_flagged"},
        "tasks": [{"id": t, "title": title, "statement": f"{title}. Write solve(value).",
                   "cluster": cluster} for t, title, cluster in TASKS],
        "builders": BUILDERS,
        "copies": rows,
        "reviewers": REVIEWERS,
        "reviews": reviews(rows),
        "findings": [],
    }


def _answer(judge, phase: int, truth: dict, seen: dict, skill: float):
    codes = dict(judge.assignments.values_list("item__key", "code"))
    for item, code in sorted(codes.items()):
        right = right_verdict(truth[item])
        first = right if chance("p1", judge.pseudonym, item) < skill else wrong(right)
        if phase == 1:
            value = first
        else:  # beside the models: moves to the strongest reviewer's verdict half the time
            value = seen[item] if chance("p2", judge.pseudonym, item) < 0.5 else first
        verdict_record(judge=judge, code=code, phase=phase, value=value)
    phase_lock(judge=judge, phase=phase)


def build_matrix(host, draw_seed: str = DRAW_SEED, url_id: str = ""):
    """The matrix session, revealed (then one truth label corrected); returns the session. With a
    given `url_id` (which the judges' commitments hash), every byte of its report replays."""
    data = bundle()
    run = a_run(host, json.dumps(data).encode("utf-8"))
    session = session_create(run=run, kind="copies", actor="test", preregistration=PREREG,
                             rubric="Does the copy do what its task asks, edge cases included?",
                             scorecards=True, draw_seed=draw_seed).session
    if url_id:
        Session.objects.filter(pk=session.pk).update(url_id=url_id)
        session.refresh_from_db()
    session = redactions_accept(session=session, patterns=["Claude"], actor="test")
    # Each review reason names the reviewer who wrote it, not a builder: kept on purpose.
    session = blinding_dismiss(session=session, matches=[r["model"] for r in data["reviewers"]],
                               actor="test")
    session = session_open(session=session, actor="test")
    guest_code = guests_configure(session=session, actor="test", allow=True, cap=3).guest_code
    judges = [invite_and_join(session, name=name).judge for name in JUDGES]
    judges.append(guest_join(code=guest_code, display_name="Walk-in Guest",
                             client_address="10.9.8.7").judge)
    truth = {c["id"]: c["truth"] for c in data["copies"]}
    seen = {r["copy"]: r["verdict"] for r in data["reviews"]
            if r["reviewer"] == "r2" and "condition" not in r}
    skills = [0.8, 0.7, 0.75, 0.65, 0.85, 0.6]
    for judge, skill in zip(judges, skills, strict=True):
        _answer(judge, 1, truth, seen, skill)
    for judge, skill in zip(judges, skills, strict=True):
        _answer(judge, 2, truth, seen, skill)
    session = advance(session, "revealed")
    corrected = next(c["id"] for c in data["copies"]
                     if c["builder"] == "b2" and c["truth"] == "tests_pass")
    truth_correct(run=run, item=corrected, truth="tests_fail",
                  note="the hidden tests missed a quoted newline", actor="test")
    return session
