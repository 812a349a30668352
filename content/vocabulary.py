"""The words a judge reads for every value, one vocabulary on every judge page and on the
instructions: the choices' own words, never a stored value ("false_alarm", "confirmed",
"seeded_defect"). Pure: no Django."""

VERDICT_LABELS = {"pass": "Pass", "fail": "Fail", "abstain": "No verdict", "real": "Real",
                  "false_alarm": "False alarm", "keep": "Keep my phase-1 verdict"}
