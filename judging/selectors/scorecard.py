"""A judge's own scorecard, after the reveal and only where the host allowed scorecards: the one
judge-facing read of truth, kept out of judging.selectors.judge (which never reads it).

The one piece of a report a judge may see: their own locked verdicts beside the truth, and their
recall and true-negative rate with Wilson intervals, scored exactly as the host's report scores
them, and written as the report writes them ("67% (2/3) [21–94%]", content.numbers.rate_text).
Nothing of any other judge, of the builders or of the model reviewers.

The scores are content.scoring.score's: the report's k/n and Wilson interval exactly. The report's
second interval, resampled by cluster or task (scores.judges[*].phases[p][v].resampled), is not
repeated here: it is drawn over every unit the session's items span, one set of draws for all
judges, so reproducing it would take the whole session's item list, beyond the judge's own
verdicts, while resampling the judge's own items alone would print a second, different interval
for the same figure; and with the dozen or so items a judge sees, the Wilson interval is the one
they can check by hand.
"""

from blindjudge.errors import NotFound
from content.numbers import rate_text
from content.scoring import score
from content.truth import is_correct
from content.vocabulary import TRUTH_LABELS, VERDICT_LABELS
from judging.enums import SessionKind, SessionState
from judging.models import Verdict
from judging.renders import inline_of


def judge_scorecard(judge) -> dict:
    """After the reveal, where the host allowed it: the judge's own verdicts, the truth, their
    scores. Nothing of any other judge."""
    session = judge.session
    if session.state != SessionState.REVEALED or not session.scorecards:
        raise NotFound("no scorecard")
    rows = {}
    findings = session.kind == SessionKind.FINDINGS
    for v in (Verdict.objects.filter(assignment__judge=judge, locked=True)
              .order_by("assignment__position")
              .values("assignment__code", "assignment__position", "phase", "value", "kept",
                      "assignment__item__copy__truth", "assignment__item__finding__truth",
                      "assignment__item__copy__defect")):
        truth = v["assignment__item__finding__truth"] or v["assignment__item__copy__truth"]
        entry = rows.setdefault(v["assignment__code"], {
            "code": v["assignment__code"], "position": v["assignment__position"],
            "truth": truth, "truth_label": TRUTH_LABELS.get(truth, truth),
            # The defect note says what was wrong in the copy (shown beside it on the card page,
            # judge/views.py `card`); copies sessions only: a finding's truth is about the finding.
            # The host writes it about a builder's copy, so the session's redactions apply (it
            # named the builder on the card, issue 24 item 9), rendered as a review's reason is.
            "defect_html": "" if findings or not v["assignment__item__copy__defect"]
            else inline_of(v["assignment__item__copy__defect"], session.redaction_patterns),
            "phase1": None, "phase2": None})
        entry[f"phase{v['phase']}"] = {"value": v["value"], "kept": v["kept"],
                                       "label": VERDICT_LABELS.get(v["value"], v["value"]),
                                       "correct": is_correct(v["value"], truth)}
    items = sorted(rows.values(), key=lambda r: r["position"])
    scores = {f"phase{phase}": score((i[f"phase{phase}"]["value"], i["truth"]) for i in items
                                     if i[f"phase{phase}"]) for phase in (1, 2)}
    for s in scores.values():
        s["recall_text"], s["tnr_text"] = rate_text(s["recall"]), rate_text(s["tnr"])
    return {"items": items, "scores": scores}
