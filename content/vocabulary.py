"""The words a judge reads for every value, one vocabulary on every judge page and on the
instructions: the choices' own words, never a stored value ("false_alarm", "confirmed",
"seeded_defect"). Pure: no Django."""

VERDICT_LABELS = {"pass": "Pass", "fail": "Fail", "abstain": "No verdict", "real": "Real",
                  "false_alarm": "False alarm", "keep": "Keep my phase-1 verdict",
                  "cannot_tell": "Cannot tell", "grounded": "Grounded", "partly": "Partly grounded",
                  "not_grounded": "Not grounded", "no_claim": "No checkable claim",
                  "left": "Left is better", "right": "Right is better",
                  "tie": "Both fine (a tie)", "both_bad": "Both bad"}

# A truth label as a judge's scorecard says it, after the reveal.
TRUTH_LABELS = {"known_good": "Good (no defect known)", "seeded_defect": "Has a seeded defect",
                "tests_fail": "Fails its tests", "tests_pass": "Passes its tests",
                "unknown": "Not known", "real": "Real", "false_alarm": "False alarm"}
