"""The report's sections: one builder per top-level key (or group of closely related keys).

Each builder is a pure function of the loaded data (reports.loading.ReportData), and of the
pooled figures where a section reads them: no database access, so a section can be read, and
tested, apart from the queries. reports.build calls them in the order the report lists them:

    protocol         the frozen protocol and its amendments
    sample           the planned sample beside the achieved one
    blinding         redactions per builder and the blinding statement
    records          the run, the session and the bundle's records as imported
    mapping          judges, assignments (who saw which item under which code) and verdicts
    scores           recall and true-negative rate per judge and per model reviewer
    pooled           per group of judges: pooled effects with bootstrap intervals, agreement
                     (agreement.py) and order effects (order_effects.py)
    phase_shift      per judge McNemar, beside the pooled figures
    decision_rules   the preregistered rules evaluated as written on the main group's figures
                     and on the sections above (built last, shown in this place)
    model_reviewers  reviewers' pairs over (reviewer, condition) cells, authorship guesses and
                     seals per builder
    reviewer_conditions  each reviewer's conditions against the default on the same copies
    self_preference  a reviewer's pass rate on its own family's copies against others'
    task_flags       the tasks judges flagged as invalid, by the share of the judges who saw them
    builders         the builders compared, blind: per builder and between each pair, paired by task
"""
