"""A pairs session on a generated run with known builder strengths (issue 31 item 5): four
builders, 40 tasks, every pair judged by three judges who prefer each copy with the Bradley–Terry
probability of its builder's strength. The report's ranking agrees with an independent fit written
here (scipy.optimize on the same penalised likelihood, where the product iterates MM), recovers
every true strength within its interval, ranks apart the builders whose strengths are far apart,
and its pairwise accuracy and left shares are what direct counting says."""

import math
import random

import numpy as np
import pytest
from scipy.optimize import minimize

from judging.enums import SessionKind, SessionState
from judging.models import Assignment
from judging.services import item_save, phase_lock
from reports.build import build_report
from tests.worlds import a_run, a_session, advance, invite_and_join

TRUE = {"b1": 0.9, "b2": 0.3, "b3": -0.3, "b4": -0.9}
TASKS = 40
PRIOR_GAMES = 2.0  # the product's stated prior (reports.pairwise.PRIOR_GAMES), written out here


def generated_bundle(rng: random.Random) -> dict:
    builders = list(TRUE)
    copies = []
    for t in range(TASKS):
        for b in builders:
            copies.append({"id": f"c{t}-{b}", "task": f"t{t}", "builder": b, "format": "text",
                           "content": f"def solve_{t}():\n" + "    pass\n" * rng.randint(1, 6),
                           "truth": rng.choice(["tests_pass", "tests_fail"])})
    return {
        "format": "blindjudge.run/2",
        "run": {"name": "generated strengths", "default_condition": "clean",
                "abstain_scoring": "not_flagged"},
        "tasks": [{"id": f"t{t}", "statement": f"Solve task {t}."} for t in range(TASKS)],
        "builders": [{"id": b, "model": f"model-{b}", "family": f"family-{b}"} for b in builders],
        "copies": copies, "reviewers": [], "reviews": [], "findings": [],
    }


def independent_fit(records, builders) -> np.ndarray:
    """The maximum of the Bradley–Terry log-likelihood with the prior (each builder PRIOR_GAMES
    games against strength 0, half won), by BFGS; centred to mean 0."""
    index = {b: n for n, b in enumerate(builders)}

    def minus_log_likelihood(theta):
        total = 0.0
        for a, b, score in records:
            d = theta[index[a]] - theta[index[b]]
            total += score * -np.logaddexp(0, -d) + (1 - score) * -np.logaddexp(0, d)
        total += sum(PRIOR_GAMES / 2 * (-np.logaddexp(0, -t) - np.logaddexp(0, t)) for t in theta)
        return -total

    fitted = minimize(minus_log_likelihood, np.zeros(len(builders)), method="BFGS",
                      options={"gtol": 1e-10}).x
    return fitted - fitted.mean()


@pytest.fixture
def judged(host):
    rng = random.Random(20261205)
    run = a_run(host, generated_bundle(rng))
    session = a_session(run, SessionState.OPEN, kind=SessionKind.PAIRS)
    answers = []  # (left builder, right builder, answer) of every phase-1 answer
    for name in ("One", "Two", "Three"):
        judge = invite_and_join(session, name).judge
        for a in Assignment.objects.filter(judge=judge).select_related(
                "item__copy__builder", "item__pair_copy__builder"):
            first, second = a.item.copy.builder.bundle_id, a.item.pair_copy.builder.bundle_id
            left, right = (second, first) if a.swapped else (first, second)
            p_left = 1 / (1 + math.exp(TRUE[right] - TRUE[left]))
            answer = "left" if rng.random() < p_left else "right"
            answers.append((left, right, answer))
            item_save(judge=judge, code=a.code, phase=1, value=answer)
        phase_lock(judge=judge, phase=1)
        for a in Assignment.objects.filter(judge=judge):
            item_save(judge=judge, code=a.code, phase=2, value="keep")
        phase_lock(judge=judge, phase=2)
    return advance(session, SessionState.REVEALED), answers


def test_the_ranking_recovers_known_strengths_and_agrees_with_an_independent_fit(judged):
    session, answers = judged
    section = build_report(session)["pairs"]
    invited = section["groups"][0]
    ranking = invited["phase1"]["ranking"]
    builders = ranking["builders"]
    assert builders == list(TRUE)
    records = [(left, right, 1.0 if answer == "left" else 0.0) for left, right, answer in answers]
    expected = independent_fit(records, builders)
    assert ranking["strengths"] == pytest.approx(list(expected), abs=1e-6)
    assert len(records) == 3 * TASKS * 6
    # 40 tasks (20 or more) and 3 judges (fewer than 10): a bootstrap over tasks, judges fixed.
    assert ranking["resampled"] == "units" and ranking["conditional_on_judges"] is True
    centre = np.mean(list(TRUE.values()))
    for builder, (low, high) in zip(builders, ranking["intervals"], strict=True):
        assert low <= TRUE[builder] - centre <= high, builder
    apart = {tuple(d["builders"]): d["apart"] for d in ranking["differences"]}
    assert apart[("b1", "b4")] and apart[("b1", "b3")] and apart[("b2", "b4")]
    # Direct counting: the left share of each judge and of the group.
    left = sum(answer == "left" for _, _, answer in answers)
    assert invited["phase1"]["left_share"]["k"] == left
    assert invited["phase1"]["left_share"]["n"] == len(answers)
    assert invited["phase1"]["position_bias"]["n_judges"] == 3
    # No tie or both bad was given: every answer is decisive.
    assert invited["phase1"]["answers"]["tie"] == invited["phase1"]["answers"]["both_bad"] == 0
    assert invited["phase1"]["style"]["fitted"] is True
