"""Decision rules naming reviewers, conditions and builders, through the services (issue 14 item 6):
checked against the run when a draft is saved, when the session opens and when the
preregistration is amended; nothing saved or opened on a refusal; the frozen protocol carries the
rules as written and the primary builder comparison only when the preregistration names one, so a
list-only preregistration freezes byte for byte as before."""

import json

import pytest

from blindjudge.errors import Invalid
from content.canonical import JCS, LEGACY, canonical_sha256
from judging.models import AuditEvent, PreregAmendment, Session
from judging.services import (
    prereg_amend,
    session_create,
    session_open,
    session_update_draft,
    truth_correct,
)
from tests.support.verdicts import verdict_record
from tests.worlds import a_run, invite_and_join, make_bundle, make_run2_bundle

OLD_RULES = """Predictions first.

```rules
[{"name": "herding", "metric": "delta_fleiss_kappa", "op": ">=", "threshold": 0.1,
  "and": {"metric": "delta_recall", "op": "<=", "threshold": 0.0}}]
```
"""
SUPPRESSION = {"name": "suppression", "metric": "condition_delta_flag_rate", "reviewer": "qwen3-1.7b",
               "condition": "told_pass", "truth_class": "defective", "op": "<=", "threshold": -0.2}
BETTER_BUILDER = {"name": "b1 better", "metric": "builder_difference", "builders": ["b1", "b2"],
                  "op": ">", "threshold": 0, "and": {"metric": "builder_difference_p_holm",
                                                     "builders": ["b1", "b2"], "op": "<",
                                                     "threshold": 0.05}}


def prereg(block) -> str:
    return f"We expect the PASS line to suppress flags.\n\n```rules\n{json.dumps(block)}\n```\n"


@pytest.fixture
def run2(host):
    # r1 (qwen3-1.7b) reviews clean and told_pass, r2 (gpt-4o-mini, OpenAI) clean only;
    # builders b1 (OpenAI), b2, b3.
    return a_run(host, make_run2_bundle())


def test_a_draft_naming_a_reviewer_not_in_the_run_is_refused_and_nothing_is_saved(run2):
    bad = prereg([{**SUPPRESSION, "reviewer": "r9"}])
    sessions = Session.objects.count()
    with pytest.raises(Invalid) as refused:
        session_create(run=run2, kind="copies", actor="t", preregistration=bad)
    assert str(refused.value) == ('preregistration: rules[0].reviewer: no reviewer "r9" in this '
                                  'run; reviewers: r1, r2')
    assert Session.objects.count() == sessions

    draft = session_create(run=run2, kind="copies", actor="t", preregistration="Plain.").session
    with pytest.raises(Invalid) as refused:
        session_update_draft(session=draft, actor="t", preregistration=prereg([
            {**SUPPRESSION, "condition": "told_fail"},
            {**BETTER_BUILDER, "builders": ["b1", "b9"]}]))
    assert str(refused.value).splitlines() == [
        'preregistration: rules[0].condition: reviewer r1 has no reviews under condition '
        '"told_fail"; its conditions: clean, told_pass',
        'preregistration: rules[1].builders[1]: no builder "b9" in this run; builders: b1, b2, b3']
    draft.refresh_from_db()
    assert draft.preregistration == "Plain."
    assert not AuditEvent.objects.filter(action="session.updated", session_id=draft.pk).exists()


def test_a_valid_rule_set_opens_and_the_protocol_carries_it(run2):
    rules = [SUPPRESSION, BETTER_BUILDER,
             {"name": "r2 tnr", "metric": "reviewer_tnr", "reviewer": "r2", "op": ">=",
              "threshold": 0.5}]
    draft = session_create(run=run2, kind="copies", actor="t", preregistration=prereg(rules)).session
    opened = session_open(session=draft, actor="t")
    assert opened.protocol["decision_rules"] == rules  # exactly as written: qwen3-1.7b stays
    assert "primary_comparison" not in opened.protocol
    assert opened.decision_rules == rules
    assert opened.protocol_sha256 == canonical_sha256(opened.protocol)


def test_the_object_form_freezes_the_primary_comparison_resolved(run2):
    block = {"primary_comparison": {"source": "reviewer", "reviewer": "gpt-4o-mini"},
             "rules": [BETTER_BUILDER]}
    draft = session_create(run=run2, kind="copies", actor="t", preregistration=prereg(block)).session
    opened = session_open(session=draft, actor="t")
    assert opened.protocol["primary_comparison"] == {"source": "reviewer", "reviewer": "r2"}
    assert opened.protocol["decision_rules"] == opened.decision_rules == [BETTER_BUILDER]
    assert opened.protocol_sha256 == canonical_sha256(opened.protocol)

    only_primary = prereg({"primary_comparison": {"source": "judges_phase2"}})
    opened = session_open(session=session_create(run=run2, kind="copies", actor="t",
                                                 preregistration=only_primary).session, actor="t")
    assert opened.protocol["primary_comparison"] == {"source": "judges_phase2", "group": "invited"}
    assert opened.protocol["decision_rules"] == opened.decision_rules == []


# Hashes of protocols frozen by main's code (d8c64ba) before rules could name anything but pooled
# figures: the same sessions, pinned draw seeds, freeze to the same content. Since RFC 8785 a
# protocol also names its canonical form and is hashed in it (the second hash); without that key
# and in the legacy form it still hashes to the first.
@pytest.mark.parametrize("bundle, preregistration, rubric, seed, sha256, jcs_sha256", [
    (make_bundle, OLD_RULES, "Is add() right?", "ab" * 32,
     "3ed4917603e3cbfd26a0b523685cfecf4b48bff37f799011f8ee70dc4d49cacc",
     "dff7b6ed2b51bf67f0b28544eded698cb3679c06536b89389e6bbcc45e0495cd"),
    (make_bundle, "", "", "cd" * 32,
     "be32608ab69bac934db2dcbd1415672ed65fb8408fd47b2fb29e71e8354ee302",
     "1277ad3894c11cc48062080b20f6f146ea2b486a7420e3557847b42f4aa5693e"),
    (make_run2_bundle, OLD_RULES, "Is add() right?", "ab" * 32,
     "ac9c40ba662f50ae7d307d2fd08e297414eeeebf43b389168181a5a79d9082cd",
     "1499a9498a92efed0058606945245339961a84a2ea093b282b1338f4b0132b58"),
    (make_run2_bundle, "", "", "cd" * 32,
     "a17fa6c1dfb10b4d870cae349d711916d41c737f7a563a1e6b21f85145f292ea",
     "f32e9acc8c9102022b2d77e6c854816b41cd9663b6639c1df3d2211e388b1139"),
])
def test_a_list_only_preregistration_freezes_the_same_protocol_as_before(
        host, bundle, preregistration, rubric, seed, sha256, jcs_sha256):
    run = a_run(host, bundle())
    draft = session_create(run=run, kind="copies", actor="t", rubric=rubric,
                           preregistration=preregistration, draw_seed=seed).session
    opened = session_open(session=draft, actor="t")
    assert opened.protocol_sha256 == canonical_sha256(opened.protocol, JCS)
    without_unit = {key: value for key, value in opened.protocol.items() if key != "resampling_unit"}
    assert canonical_sha256(without_unit, JCS) == jcs_sha256
    assert opened.protocol["canonical"] == JCS
    # Since issue 28 a protocol also freezes the unit the report resamples (make_bundle: one
    # task, no clusters; make_run2_bundle: copies in the cluster "arith" and a copy without one,
    # its task's own unit); without it, and the canonical form, the rest is what it was.
    assert opened.protocol["resampling_unit"] == (
        {"by": None, "units": 1} if bundle is make_bundle else {"by": "cluster", "units": 2})
    before = {key: value for key, value in opened.protocol.items()
              if key not in ("canonical", "resampling_unit")}
    assert canonical_sha256(before, LEGACY) == sha256
    assert set(before) == {
        "blindjudge_protocol", "kind", "tasks", "rubric", "items", "items_per_judge",
        "redaction_patterns", "reviewer_display", "scorecards", "preregistration",
        "decision_rules", "allocation_seed"}


def test_opening_checks_the_rules_against_the_run_again(run2):
    # A draft stored by an older version, before its rules were checked against the run (written
    # here as that version would have stored it): the opening refuses it and nothing opens.
    draft = session_create(run=run2, kind="copies", actor="t").session
    Session.objects.filter(pk=draft.pk).update(preregistration=prereg(
        [{**SUPPRESSION, "condition": "clean"}]))
    with pytest.raises(Invalid) as refused:
        session_open(session=draft, actor="t")
    assert str(refused.value) == (
        "preregistration: rules[0].condition: \"clean\" is the run's default condition, which "
        "every other condition is compared against; name another")
    draft.refresh_from_db()
    assert (draft.state, draft.protocol, draft.decision_rules) == ("draft", None, [])


def test_amendments_are_checked_against_the_run(run2):
    opened = session_open(session=session_create(
        run=run2, kind="copies", actor="t",
        preregistration=prereg({"primary_comparison": {"source": "truth"}, "rules": [SUPPRESSION]}),
    ).session, actor="t")
    with pytest.raises(Invalid) as refused:
        prereg_amend(session=opened, actor="t", text=prereg([
            {"name": "self", "metric": "self_preference_delta", "reviewer": "r1",
             "truth_class": "good", "op": ">", "threshold": 0.1}]))
    assert str(refused.value) == (
        "amendment: rules[0].reviewer: reviewer r1's family \"Alibaba\" built no copy in this "
        "run; self-preference is measured only for a reviewer whose family also built copies")
    # The primary comparison froze with the protocol: an amendment may restate it, not change it.
    with pytest.raises(Invalid) as refused:
        prereg_amend(session=opened, actor="t", text=prereg(
            {"primary_comparison": {"source": "judges_phase1"}, "rules": [BETTER_BUILDER]}))
    assert str(refused.value) == (
        'amendment: primary_comparison: the primary comparison froze when the session opened '
        '({"source": "truth"}); an amendment cannot change it')
    # So did the significance level (0.05 when the preregistration named none).
    with pytest.raises(Invalid) as refused:
        prereg_amend(session=opened, actor="t", text=prereg({"alpha": 0.1, "rules": []}))
    assert str(refused.value) == (
        "amendment: alpha: the significance level froze when the session opened (0.05); an "
        "amendment cannot change it")
    assert not PreregAmendment.objects.filter(session=opened).exists()
    opened.refresh_from_db()
    assert opened.decision_rules == [SUPPRESSION]
    prereg_amend(session=opened, actor="t", text=prereg({"alpha": 0.05, "rules": [SUPPRESSION]}))

    judge = invite_and_join(opened, name="Ada").judge
    verdict_record(judge=judge, code=judge.assignments.first().code, phase=1, value="pass")
    self_pref = {"name": "self", "metric": "self_preference_delta", "reviewer": "gpt-4o-mini",
                 "truth_class": "good", "op": ">", "threshold": 0.1}
    amendment = prereg_amend(session=opened, actor="t", text=prereg(
        {"primary_comparison": {"source": "truth"}, "rules": [self_pref]}))
    assert amendment.decision_rules == [self_pref] and amendment.before_first_verdict is False
    opened.refresh_from_db()
    assert opened.decision_rules == [self_pref]
    assert "primary_comparison" in opened.protocol  # the frozen protocol never changes


def test_a_rule_that_excludes_flagged_tasks_is_refused_when_written(run2):
    # No session collects judges' task flags yet: the rule is refused when the preregistration is
    # written (and would be at opening), never found unusable at report time.
    exclude = {"name": "drop unfair tasks", "action": "exclude_tasks",
               "when": {"flag_share": ">=0.5", "severity": ">=2"}}
    with pytest.raises(Invalid) as refused:
        session_create(run=run2, kind="copies", actor="t", preregistration=prereg([exclude]))
    assert str(refused.value) == (
        "preregistration: rules[0].action: exclude_tasks acts on the judges' task flags, and this "
        "session does not collect them")


# --- exclude_judge (issue 30 item 5): control-based metrics need controls --------------------------

MISSED = {"name": "missed the seeded defects", "action": "exclude_judge",
          "when": {"judge_recall_controls": "<0.5"}, "screening_share": 0.33}


def test_a_control_based_exclusion_is_refused_where_the_session_has_no_such_control(host, run2):
    # A findings session judges findings, never a copy against a control's truth.
    run = a_run(host, make_bundle())
    with pytest.raises(Invalid) as refused:
        session_create(run=run, kind="findings", actor="t", preregistration=prereg([MISSED]))
    assert str(refused.value) == (
        "preregistration: rules[0].when.judge_recall_controls: it reads the seeded-defect "
        "controls (copies of truth seeded_defect), and this session has none")
    # run2 has one seeded defect: a third of it, rounded up, is all of it.
    sessions = Session.objects.count()
    with pytest.raises(Invalid) as refused:
        session_create(run=run2, kind="copies", actor="t", preregistration=prereg([MISSED]))
    assert str(refused.value) == (
        "preregistration: rules[0].screening_share: 0.33 of the session's 1 seeded-defect control "
        "leaves none for the reported scores; name a smaller share or add controls")
    assert Session.objects.count() == sessions
    # A metric that reads no control is taken on either.
    fast = {"name": "too fast", "action": "exclude_judge",
            "when": {"judge_fast_answers": ">=0.5", "seconds": "<2"}}
    session_create(run=run, kind="findings", actor="t", preregistration=prereg([fast]))


def test_a_control_based_exclusion_is_refused_at_opening_once_its_controls_are_gone(host):
    # Two seeded defects when the draft is written; one corrected to tests_fail before opening.
    bundle = make_run2_bundle()
    bundle["copies"][4]["truth"] = "seeded_defect"
    bundle["copies"][4]["defect"] = "off by one"
    run = a_run(host, bundle)
    draft = session_create(run=run, kind="copies", actor="t",
                           preregistration=prereg([MISSED])).session
    truth_correct(run=run, item=bundle["copies"][4]["id"], truth="tests_fail",
                  note="the tests say so", actor="t")
    with pytest.raises(Invalid) as refused:
        session_open(session=draft, actor="t")
    assert str(refused.value) == (
        "preregistration: rules[0].screening_share: 0.33 of the session's 1 seeded-defect control "
        "leaves none for the reported scores; name a smaller share or add controls")
    draft.refresh_from_db()
    assert draft.state == "draft" and draft.protocol is None
    assert not AuditEvent.objects.filter(session=draft, action="screening.drawn").exists()
