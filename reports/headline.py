""""What was found": the plain sentences the HTML report opens with, generated from its figures.

`headline(report)` returns one entry per topic, in the page's order: who judged what; the builders
compared (the primary comparison and how sure it is); the judges alone against the model
reviewers; the phase shift towards and away from truth; each decision rule in force; what the
blinding did not remove. Each entry names the section that holds its figures and their JSON paths,
so every number in a sentence can be found in the report; a sentence states only what its figures
show: a builder is said to be above another only where builders_compared says so (its ranking's
"supported" pairs), judges and models are set side by side and never said to differ (the report
holds no test between them), a leak is said to be shown only where its test's p is below 0.05.

Builders and reviewers are named by model (the bundle id is added only where two share a model).
Pure: reads the report's dict only; no Django, no numpy.
"""

from reports import numbers


def _alpha(report: dict) -> float:
    """The significance level the report reads its tests at (builders_compared.alpha: the
    preregistration's, else 0.05)."""
    return report["builders_compared"]["alpha"]
GROUP_WORDS = {"invited": "invited", "guest": "guest", "self_blinded_host": "host (self-blinded)",
               "removed": "removed"}
APART_WORDS = {"guest": "the guests", "self_blinded_host": "the host (self-blinded)",
               "removed": "removed judges"}
OPS = {">=": "≥", "<=": "≤", "==": "=", "!=": "≠", ">": ">", "<": "<"}
OUTCOMES = {"fired": "fired", "not fired": "did not fire", "not computable": "could not be evaluated"}
# What recall and the true-negative rate count, by session kind: (verb, its objects) for each.
KIND_WORDS = {
    "copies": {"recall": ("caught", "defective copies"), "tnr": ("passed", "good ones"),
               "items": ("copy", "copies")},
    "findings": {"recall": ("confirmed", "real findings"), "tnr": ("rejected", "false alarms"),
                 "items": ("finding", "findings")},
}


# --- names -----------------------------------------------------------------------------------------

def _labels(entries: list[dict]) -> dict:
    """bundle id -> display name: the model, with the bundle id added where two entries share a
    model (and where the bundle id is not the model itself)."""
    models = [e["model"] for e in entries]
    labels = {}
    for e in entries:
        shared = models.count(e["model"]) > 1
        labels[e["id"]] = f"{e['model']} ({e['id']})" if shared and e["id"] != e["model"] else e["model"]
    return labels


def builder_names(report: dict) -> dict:
    return _labels(report["builders"])


def reviewer_names(report: dict) -> dict:
    return _labels(report["reviewers"])


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def listed(parts: list[str]) -> str:
    """a, b and c."""
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


# --- the topics ------------------------------------------------------------------------------------

def _sample(report: dict) -> dict:
    achieved = report["sample"]["achieved"]
    kind = KIND_WORDS.get(report["session"]["kind"], KIND_WORDS["copies"])
    by_group = achieved["judges_by_group"]
    joined = achieved["judges_joined"]
    groups = []
    for group, count in by_group.items():
        if group == "self_blinded_host":
            groups.append("the host (self-blinded)")
        elif group == "guest":
            groups.append(plural(count, "guest"))
        else:
            groups.append(f"{count} {GROUP_WORDS.get(group, group)}")
    items = report["session"]["items"]
    tasks, builders, reviewers = len(report["tasks"]), len(report["builders"]), len(report["reviewers"])
    sentences = []
    if joined:
        both = achieved["judges_locked_both"]
        sentences.append(
            f"{plural(joined, 'judge')} joined ({listed(groups)}); "
            f"{achieved['judges_locked_phase1']} locked phase 1 and "
            f"{both if both else 'none'} locked both phases.")
    else:
        sentences.append("Nobody joined the session: there are no human verdicts.")
    silent = achieved["judges_without_verdicts"]
    if silent:
        sentences.append(f"{plural(len(silent), 'judge')} joined and gave no verdict "
                         f"({listed(silent)}): listed apart, out of the plots and per-judge tables.")
    on = " raised on copies" if report["session"]["kind"] == "findings" else ""
    sentences.append(
        f"The session held {plural(items, *kind['items'])}{on} of {plural(tasks, 'task')} by "
        f"{plural(builders, 'builder')}; {plural(reviewers, 'model reviewer')} reviewed the copies.")
    return {"key": "sample", "title": "Who judged what", "sentences": sentences,
            "section": "sample", "section_title": "Sample and blinding",
            "figures": ["sample.achieved", "session.items", "tasks", "builders", "reviewers"]}


def primary_words(primary: dict, reviewers: dict, condition: str) -> str:
    source = primary["source"]
    if source in ("judges_phase1", "judges_phase2"):
        group = primary.get("group") or "invited"
        who = {"invited": "the invited judges'", "guest": "the guests'",
               "self_blinded_host": "the host's (self-blinded)"}.get(group, f"the {group} judges'")
        phase = "phase 1, alone" if source == "judges_phase1" else "phase 2, beside the models"
        return f"{who} pass rate in {phase}"
    if source == "truth":
        return "the share of copies that passed their tests"
    if source == "reviewer":
        name = reviewers.get(primary.get("reviewer"), primary.get("reviewer"))
        return f"model reviewer {name}'s pass rate (condition {condition})"
    return f"the source {source}"


def primary_rate(entry: dict, primary: dict):
    """A builder entry's rate object on the primary comparison's source (None where absent)."""
    source = primary["source"]
    if source == "truth":
        return entry["truth"]["pass_rate"]
    if source in ("judges_phase1", "judges_phase2"):
        return (entry["judges"].get(primary.get("group") or "invited") or {}).get(source[-1])
    return next((r["pass_rate"] for r in entry["reviewers"] if r["reviewer"] == primary.get("reviewer")),
                None)


def oriented(d: dict, first: str) -> dict:
    """A difference {builders [a, b], difference {value, low, high}} turned to read first − other."""
    value = d["difference"]
    if d["builders"][0] == first:
        return {"builders": list(d["builders"]), **value}
    def flip(v):
        return None if v is None else -v

    return {"builders": [d["builders"][1], d["builders"][0]], "value": flip(value["value"]),
            "low": flip(value["high"]), "high": flip(value["low"])}


def _tasks_words(d: dict) -> str:
    """"over 9 tasks", with what the interval rests on where that matters: the clusters, no
    interval at this size, judges held fixed."""
    tasks = plural(d["tasks"], "task")
    if d.get("units") and d["units"] != d["tasks"]:
        tasks = f"{tasks} in {plural(d['units'], 'cluster')}"
    if d.get("no_interval") and d["difference"]["value"] is not None:
        tasks += "; no interval is valid at so few units with several verdicts per task"
    if d.get("conditional_on_judges"):
        tasks += f"; {numbers.conditional_on_judges(d['judges'])}"
    return tasks


def _builders(report: dict) -> dict:
    # Where a rule that acts was preregistered, the results with every exclusion together are
    # the primary ones (preregistered_exclusions.primary): the headline states those.
    exclusions = report.get("preregistered_exclusions") or {}
    excluded = bool(exclusions.get("primary"))
    section = exclusions["builders_compared"] if excluded else report["builders_compared"]
    path = "preregistered_exclusions.builders_compared" if excluded else "builders_compared"
    names, reviewers = builder_names(report), reviewer_names(report)
    entry = {"key": "builders", "title": "The builders compared", "sentences": [],
             "section": "builders-compared", "section_title": "Builders compared",
             "figures": [f"{path}.builders", f"{path}.differences", f"{path}.ranking"]}
    sentences = entry["sentences"]
    if excluded:
        sentences.append(_exclusions_words(exclusions))
    if not section["compared"]:
        sentences.append(f"The builders were not compared: {section['not_compared']}.")
        return entry
    primary = section["primary"]
    words = primary_words(primary, reviewers, report["run"]["default_condition"])
    chosen = [d for d in section["differences"] if d["primary"]]
    named = ("named by the preregistration" if primary["named_by"] == "preregistration"
             else "none was preregistered, so the default")
    if not chosen:
        sentences.append(section["ranking"]["statements"][0])
        return entry
    by_id = {b["builder"]: b for b in section["builders"]}
    order = section["ranking"]["order"] or [b["builder"] for b in section["builders"] if b["copies"]]
    rates = [f"{names.get(b, b)} {numbers.rate_text(primary_rate(by_id[b], primary))}" for b in order]
    sentences.append(f"The primary comparison ({named}) is {words}: {listed(rates)}.")
    supported = section["ranking"]["supported"]
    for above, below in supported:
        d = next(d for d in chosen if set(d["builders"]) == {above, below})
        o = oriented(d, above)
        sentences.append(
            f"{names.get(above, above)} passed more often than {names.get(below, below)}: "
            f"{numbers.difference_text(o)}, Holm-adjusted p = {numbers.p_text(d['p_holm'])}, "
            f"over {_tasks_words(d)}.")
    others = [d for d in chosen if d["difference"]["value"] is not None
              and sorted(d["builders"]) not in [sorted(s) for s in supported]]
    if others:
        largest = max(others, key=lambda d: abs(d["difference"]["value"]))
        value = largest["difference"]["value"]
        o = oriented(largest, largest["builders"][0] if value >= 0 else largest["builders"][1])
        a, b = (names.get(x, x) for x in o["builders"])
        lead = ("No two builders are" if not supported else
                f"The other {plural(len(others), 'pair')} {'is' if len(others) == 1 else 'are'}")
        sentences.append(
            f"{lead} distinguished: a difference counts only where its Holm-adjusted p is below "
            f"{_alpha(report):g} and its 95% interval, where one is valid, excludes 0. "
            f"The largest{' of them' if supported else ''}, "
            f"{a} − {b}, is {numbers.difference_text(o)} (Holm-adjusted p = "
            f"{numbers.p_text(largest['p_holm'])}, {_tasks_words(largest)}).")
    if primary["source"] != "truth" and any(b["truth"]["pass_rate"]["n"] for b in section["builders"]):
        truth = [f"{names.get(b, b)} {numbers.rate_text(by_id[b]['truth']['pass_rate'])}"
                 for b in order if by_id[b]["truth"]["pass_rate"]["n"]]
        sentences.append(f"By their tests instead: {listed(truth)}.")
    return entry


def _reviewer_range(report: dict, key: str) -> list[tuple[str, dict]]:
    names = reviewer_names(report)
    out = []
    for e in report["scores"]["reviewers"]:
        main = e["groups"].get("main")
        if main and main["current"][key]["n"]:
            out.append((names.get(e["reviewer"], e["reviewer"]), main["current"][key]))
    return out


def _judges_alone(report: dict, catch: str, defective: str, passed: str, good: str) -> str:
    """Without pooled figures (no invited judge locked both phases): each invited judge's own
    phase-1 scores, lowest and highest (scores.judges)."""
    invited = [s for s in report["scores"]["judges"] if s["group"] == "invited"
               and s["phases"]["1"]["current"]["recall"]["n"] + s["phases"]["1"]["current"]["tnr"]["n"]]
    if not invited:
        return "No invited judge has a scored phase-1 verdict: there is no figure for the judges alone."
    parts = []
    if len(invited) == 1:
        who = invited[0]["judge"]
        for key, verb, objects in (("recall", catch, defective), ("tnr", passed, good)):
            score = invited[0]["phases"]["1"]["current"][key]
            if score["n"]:
                parts.append(f"{verb} {numbers.rate_text(score)} of {objects}")
        return (f"No invited judge locked both phases, so there is no pooled figure; alone "
                f"(phase 1), the one invited judge, {who}, {' and '.join(parts)}.")
    for key, verb, objects in (("recall", catch, defective), ("tnr", passed, good)):
        scored = [(s["judge"], s["phases"]["1"]["current"][key]) for s in invited
                  if s["phases"]["1"]["current"][key]["n"]]
        if not scored:
            continue
        low = min(scored, key=lambda x: x[1]["rate"])
        high = max(scored, key=lambda x: x[1]["rate"])
        if low[0] == high[0]:
            parts.append(f"{verb} {numbers.rate_text(low[1])} of {objects} ({low[0]})")
        else:
            parts.append(f"{verb} from {numbers.rate_text(low[1])} ({low[0]}) to "
                         f"{numbers.rate_text(high[1])} ({high[0]}) of {objects}")
    return (f"No invited judge locked both phases, so there is no pooled figure; alone (phase 1), "
            f"each invited judge {' and '.join(parts)}.")


def _humans_and_models(report: dict) -> dict:
    kind = KIND_WORDS.get(report["session"]["kind"], KIND_WORDS["copies"])
    (catch, defective), (passed, good) = kind["recall"], kind["tnr"]
    pooled = report["phase_shift"]["pooled"].get("invited") or {}
    effects = pooled.get("effects")
    entry = {"key": "humans-and-models", "title": "People alone and the models",
             "sentences": [], "section": "reviewers", "section_title": "Model reviewers",
             "figures": ["phase_shift.pooled.invited.effects.recall_phase1",
                         "phase_shift.pooled.invited.effects.tnr_phase1",
                         "scores.judges[].phases.1.current", "scores.reviewers[].groups.main.current"]}
    sentences = entry["sentences"]
    if effects:
        paired = sum(pooled["paired_verdicts"].values())
        sentences.append(
            f"Alone (phase 1), the invited judges {catch} "
            f"{numbers.estimate_text(effects['recall_phase1'])} of {defective} and {passed} "
            f"{numbers.estimate_text(effects['tnr_phase1'])} of {good} ({plural(pooled['judges'], 'judge')} "
            f"who locked both phases, {plural(paired, 'paired verdict')}; "
            f"{numbers.pooled_interval_text(pooled['resampling'])}).")
    else:
        sentences.append(_judges_alone(report, catch, defective, passed, good))
    recall, tnr = _reviewer_range(report, "recall"), _reviewer_range(report, "tnr")
    condition = report["run"]["default_condition"]
    # Model reviewers reviewed copies, whatever the session's kind.
    (catch, defective), (passed, good) = KIND_WORDS["copies"]["recall"], KIND_WORDS["copies"]["tnr"]
    if not report["reviewers"]:
        sentences.append("The run has no model reviewers.")
    elif len(recall) <= 4 and len(tnr) <= 4:
        rows = []
        tnr_of = dict(tnr)
        for index, (name, r) in enumerate(recall):  # what is counted, said once, first
            of_defective, of_good = (f" of {defective}", f" of {good}") if index == 0 else ("", "")
            rows.append(f"{name} {catch} {numbers.rate_text(r)}{of_defective} and "
                        + (f"{passed} {numbers.rate_text(tnr_of[name])}{of_good}" if name in tnr_of
                           else f"had none of the {good} scored"))
        if rows:
            sentences.append(f"Under the default condition ({condition}), the model reviewers: "
                             f"{'; '.join(rows)} (their own family's copies and failed seals apart).")
        else:
            sentences.append(f"No model reviewer has a scored review of a defective item under the "
                             f"default condition ({condition}).")
    else:
        def span(values):
            low = min(values, key=lambda v: v[1]["rate"])
            high = max(values, key=lambda v: v[1]["rate"])
            return (f"from {numbers.rate_text(low[1])} ({low[0]}) to "
                    f"{numbers.rate_text(high[1])} ({high[0]})")
        sentences.append(
            f"Under the default condition ({condition}), the {len(report['reviewers'])} model "
            f"reviewers {catch} {span(recall) if recall else numbers.MISSING} of {defective}, and "
            f"{passed} {span(tnr) if tnr else numbers.MISSING} of {good} (their own family's "
            f"copies and failed seals apart).")
    if report["session"]["kind"] == "findings" and recall:
        sentences.append("The judges judged findings and the models copies: the two are not the "
                         "same measure, and are not set side by side.")
    elif effects and recall:
        sentences.append("No test here sets the judges against the models: the two are side by "
                         "side, the judges' intervals from a bootstrap, the reviewers' Wilson's.")
    return entry


CLASS_WORDS = {"defective": "defective copies", "good": "correct ones"}


def _conditions(report: dict) -> dict | None:
    """Where the run asked its reviewers under several conditions (what it was run for), the
    opening says first what each condition did: a reviewer that cannot tell defective from correct
    copies under the default condition first, its shifts not interpretable; then each other
    reviewer's flag rate under the default condition and under each other one, with the
    discordant copies and McNemar's exact p."""
    section = report["reviewer_conditions"]
    with_conditions = [r for r in section["reviewers"] if r["comparisons"]]
    if not with_conditions:
        return None
    names = reviewer_names(report)
    default = section["default_condition"]
    entry = {"key": "conditions", "title": "What the conditions did",
             "sentences": [], "section": "reviewer-conditions",
             "section_title": "Reviewers under other conditions",
             "figures": ["reviewer_conditions.reviewers[].conditions[].by_class",
                         "reviewer_conditions.reviewers[].comparisons",
                         "reviewer_conditions.reviewers[].discrimination"]}
    sentences = entry["sentences"]
    ordered = sorted(with_conditions, key=lambda r: bool((r["discrimination"] or {}).get("discriminates")))
    for r in ordered:
        name = names.get(r["reviewer"], r["reviewer"])
        check = r["discrimination"]
        if check is not None and not check["discriminates"]:
            sentences.append(
                f"{name} flagged {numbers.percent(check['recall'])} of defective copies and "
                f"{numbers.percent(check['false_alarm_rate'])} of correct ones under the default "
                f"condition ({default}; one-sided exact p = {numbers.p_text(check['p_value'])}): "
                "its shifts under the other conditions are not interpretable: the reviewer does "
                "not tell defective from correct copies.")
            continue
        rates = {c["condition"]: c["by_class"] for c in r["conditions"]}
        parts = []
        for c in r["comparisons"]:
            cls = c["truth_class"]
            # (a reviewer may have no review under the default condition: its rate is missing)
            before = rates.get(default, {}).get(cls, {}).get("rate")
            after = rates[c["condition"]][cls]["rate"]
            parts.append(
                f"under {c['condition']} it flagged {numbers.percent(after)} of {CLASS_WORDS[cls]} "
                f"against {numbers.percent(before)} under {default} ({c['only_default']} flagged "
                f"under {default} only, {c['only_condition']} under {c['condition']} only, p = "
                f"{numbers.p_text(c['p_value'])})")
        sentences.append(f"{name}: {'; '.join(parts)}.")
    return entry


def _phase_shift(report: dict) -> dict:
    pooled = report["phase_shift"]["pooled"].get("invited") or {}
    effects = pooled.get("effects")
    entry = {"key": "phase-shift", "title": "Beside the models",
             "sentences": [], "section": "phase-shift", "section_title": "Phase shift",
             "figures": ["phase_shift.pooled.invited.effects", "phase_shift.pooled.invited.discordant",
                         "phase_shift.pooled.invited.agreement"]}
    sentences = entry["sentences"]
    if not effects:
        sentences.append("No invited judge gave paired verdicts (both phases locked, known truth): "
                         "the shift between the phases is not measured.")
        return entry
    sentences.append(
        f"Beside the models (phase 2), the invited judges' recall went from "
        f"{numbers.percent(effects['recall_phase1']['value'])} to "
        f"{numbers.percent(effects['recall_phase2']['value'])} "
        f"({numbers.difference_text(effects['delta_recall'])}) and their true-negative rate from "
        f"{numbers.percent(effects['tnr_phase1']['value'])} to "
        f"{numbers.percent(effects['tnr_phase2']['value'])} "
        f"({numbers.difference_text(effects['delta_tnr'])}).")
    discordant = pooled["discordant"]
    towards = sum(c["towards_truth"] for c in discordant.values())
    away = sum(c["away_from_truth"] for c in discordant.values())
    paired = sum(pooled["paired_verdicts"].values())
    sentences.append(
        f"Of {plural(paired, 'paired verdict')}, {towards} changed towards the truth "
        f"({numbers.estimate_text(effects['shift_towards_truth'])}) and {away} away from it "
        f"({numbers.estimate_text(effects['shift_away_from_truth'])}).")
    agreement = pooled.get("agreement")
    if agreement and agreement["phase1"]["fleiss_kappa"] is not None:
        sentences.append(
            f"Their agreement went from Fleiss' κ {numbers.decimal(agreement['phase1']['fleiss_kappa'])} "
            f"to {numbers.decimal(agreement['phase2']['fleiss_kappa'])} ({agreement['label']}).")
    others = [g for g in report["phase_shift"]["pooled"] if g != "invited"]
    if others:
        words = listed([APART_WORDS.get(g, g) for g in others])
        verb = "is" if others == ["self_blinded_host"] else "are"
        sentences.append(f"{words[0].upper()}{words[1:]} {verb} reported apart, under Phase shift.")
    return entry


def condition_text(c: dict) -> str:
    selectors = c.get("selectors") or {}
    where = ", ".join(f"builders {v[0]} − {v[1]}" if k == "builders" else f"{k} {v}"
                      for k, v in selectors.items())
    metric = c["metric"] + (f" ({where})" if where else "")
    rule = f"{OPS.get(c['op'], c['op'])} {c['threshold']}"
    if c["value"] is None:
        return f"{metric} {rule}: no value"
    holds = "holds" if c["holds"] else "does not hold"
    return f"{metric} = {numbers.decimal(c['value'], 3)}, {rule}: {holds}"


def _rules(report: dict) -> dict:
    section = report["decision_rules"]
    entry = {"key": "rules", "title": "Decision rules", "sentences": [],
             "section": "decision-rules", "section_title": "Decision rules",
             "figures": ["decision_rules.rule_sets[in_force].rules"]}
    sentences = entry["sentences"]
    in_force = next((s for s in section["rule_sets"] if s["in_force"]), None)
    if in_force is None or not in_force["rules"]:
        sentences.append("No decision rule was preregistered.")
        return entry
    # Where preregistered exclusions make the primary results, the rules are stated on them.
    exclusions = report.get("preregistered_exclusions") or {}
    if exclusions.get("primary") and exclusions.get("decision_rules"):
        in_force = next(s for s in exclusions["decision_rules"]["rule_sets"] if s["in_force"])
        entry["figures"].insert(0, "preregistered_exclusions.decision_rules.rule_sets[in_force].rules")
        sentences.append("On the primary results, with every preregistered exclusion together "
                         "(everyone's evaluation is in the section below):")
    if in_force["source"] != "protocol":
        when = {False: "after the first verdict", True: "before the first verdict"}.get(
            in_force["before_first_verdict"], "")
        sentences.append(f"The rules in force are those of {in_force['source']}"
                         f"{', written ' + when if when else ''}.")
    for rule in in_force["rules"]:
        conditions = "; ".join(condition_text(c) for c in rule["conditions"])
        sentences.append(f"“{rule['name']}” {OUTCOMES.get(rule['outcome'], rule['outcome'])} "
                         f"({conditions}).")
    return entry


def _blinding(report: dict) -> dict:
    names = builder_names(report)
    entry = {"key": "blinding", "title": "What the blinding did not remove", "sentences": [],
             "section": "sample", "section_title": "Sample and blinding",
             "figures": ["blinding_statement", "redactions_per_builder", "protocol.frozen.redaction_patterns",
                         "model_reviewers.authorship.all"]}
    sentences = entry["sentences"]
    patterns = len(report["protocol"]["frozen"].get("redaction_patterns") or [])
    redactions = report["redactions_per_builder"]
    counts = set(redactions.values())
    redacted = f"{plural(patterns, 'accepted pattern')} redacted" if patterns else "nothing redacted"
    text = (f"Judges saw each item's content as written, metadata stripped and {redacted}; a "
            f"model's style can still identify it.")
    sentences.append(text)
    dismissed = report["protocol"]["frozen"].get("blinding_dismissed") or []
    if dismissed:
        entry["figures"].append("protocol.frozen.blinding_dismissed")
        sentences.append(f"The host kept {plural(len(dismissed), 'matched name')} on purpose, so "
                         f"judges read {'it' if len(dismissed) == 1 else 'them'}: "
                         f"{listed([f'“{key}”' for key in dismissed])}.")
    if report.get("shapes_of_one_builder"):
        entry["figures"].append("shapes_of_one_builder")
    for shape in report.get("shapes_of_one_builder") or []:
        builder = names.get(shape["builder"], shape["builder"])
        seen = ("the normaliser removed it before judging" if shape["stripped"]
                else "judges saw it, and could tell the builder by it")
        sentences.append(f"Only {builder}'s copies had {shape['words']} "
                         f"({shape['copies']} of {shape['of']}): {seen}.")
    if counts and counts != {0}:
        if len(counts) > 1:
            hits = listed([f"{names.get(b, b)} {n}" for b, n in redactions.items() if n])
            sentences.append(f"Redactions were unequal across builders ({hits}; the others none), "
                             f"and unequal redaction is itself a leak.")
        else:
            sentences.append(f"Each builder's items had {plural(counts.pop(), 'redaction')}.")
    authorship = report["model_reviewers"]["authorship"]["all"]
    if authorship["guesses"]:
        parts, shown = [], []
        for key in ("family", "model"):
            g = authorship[key]
            parts.append(f"its {key} in {numbers.rate_text(g)} against chance "
                         f"{numbers.percent(g['chance'])} (p = {numbers.p_text(g['p_value'])})")
            if g["p_value"] is not None and g["p_value"] < _alpha(report):
                shown.append(key)
        tail = (f": to a model, the content still points to its author's {' and '.join(shown)}"
                if shown else f"; better than chance is not shown (p below {_alpha(report):g} for "
                                 "neither)")
        sentences.append(f"Model reviewers who guessed the builder got {' and '.join(parts)}{tail}.")
    else:
        sentences.append("No model reviewer guessed authorship, so the leak to models is unmeasured.")
    sentences.append("People were not asked to guess authors, so how far they stayed blind is "
                     "unmeasured.")
    return entry


def _exclusions_words(exclusions: dict) -> str:
    """What the preregistered exclusions left out, said before the primary results they give."""
    left = []
    if exclusions["excluded_tasks"]:
        left.append(f"{plural(len(exclusions['excluded_tasks']), 'task')} "
                    f"({', '.join(exclusions['excluded_tasks'])})")
    if exclusions["excluded_judges"]:
        left.append(f"{plural(len(exclusions['excluded_judges']), 'judge')} "
                    f"({', '.join(e['judge'] for e in exclusions['excluded_judges'])})")
    what = listed(left) if left else "nothing"
    return (f"With every preregistered exclusion together, the primary results (everyone's are "
            f"in the section below): they leave out {what}.")


def headline(report: dict) -> list[dict]:
    """The opening section's topics, each {key, title, sentences, section, section_title, figures}."""
    conditions = _conditions(report)
    return [*([conditions] if conditions else []), _sample(report), _builders(report),
            _humans_and_models(report), _phase_shift(report), _rules(report), _blinding(report)]
