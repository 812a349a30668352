"""Recompute every hash a report publishes, from the report alone. Pure: no Django, no database.

Checks: the run manifest's hash, and that the report's run, tasks, builders, reviewers and copies
are the records the manifest hashes (so a builder's identity or a task statement cannot be
swapped unseen: run/2 hashes each task, run/1 holds its one statement in the run object); that
each copy's task, builder and content are the ones the manifest binds it to (runs imported since
issue 25 item 7: their manifest has "bindings"; so two copies cannot trade builders); the frozen
protocol's hash; for each judge the commitment (salted canonical mapping) and the drawn order
(positions sorted by HMAC(order seed, item); in a by-task session, the protocol's `by_task`, the
tasks interleaved as content.draws.draw_order_by_task draws them from the order seed and the
protocol's item -> task keys, and every task a judge has held whole); that the mapping's copy →
builder agrees with the report's copies; and, where the protocol commits to a screening seed (an
exclude_judge rule reading the controls), that the published seed hashes to the commitment and
draws the published screening controls (content.draws.screening_items over the items whose
copies are controls, by the report's copies' truth).

Each hash is recomputed in the canonical form its object names (content.canonical): the manifest's
and the frozen protocol's own "canonical" (RFC 8785 since issue 15; absent: the legacy form they
were made in), and each commitment in its protocol's form. The report's `protocol.canonical`,
`run.manifest_canonical` and each `judges[].commitment.canonical` state those forms for a reader
and must agree with them.
"""

from collections import defaultdict
from itertools import product

from content.canonical import canonical_sha256, form_named, form_of, sha256_hex
from content.commitments import commitment_sha256
from content.draws import (
    draw_order,
    draw_order_by_task,
    order_key,
    pair_swapped,
    screening_items,
    stratified_sample,
)
from content.rules import CONTROL_TRUTHS, screening_count
from content.truth import audit_stratum


def verify(report: dict) -> tuple[list[str], int]:
    """(problems, number of checks made). An empty problem list means every hash recomputed."""
    problems: list[str] = []
    checks = 0
    try:
        manifest = report["run"]["manifest"]
        mform = form_of(manifest)
        _stated(report["run"], "manifest_canonical", mform, "run.manifest_canonical",
                "the manifest's", problems)
        checks += 1
        if canonical_sha256(manifest, mform) != report["run"]["manifest_sha256"]:
            problems.append("run.manifest_sha256 does not match the published manifest")
        checks += 1
        if manifest["bundle_sha256"] != report["run"]["bundle_sha256"]:
            problems.append("run.bundle_sha256 differs from the manifest's bundle_sha256")
        checks += 1
        # Reports exported before run/2 published the run/1 object's two fields, not the record.
        record = report["run"].get("record") or {"name": report["run"]["name"],
                                                 "task": report["run"]["task"]}
        if canonical_sha256(record, mform) != manifest["run"]:
            problems.append("run: the run record does not hash to the manifest's run entry")
        if "tasks" in report:  # reports of schema blindjudge.report/1 published no tasks
            task_problems, task_checks = _verify_tasks(report, manifest, record, mform)
            problems += task_problems
            checks += task_checks
        for key in ("builders", "reviewers"):
            checks += 1
            records = {r["id"]: r for r in report[key]}
            if set(records) != set(manifest[key]):
                problems.append(f"{key}: the ids differ from the manifest's")
            for rid, record in records.items():
                checks += 1
                published = {"id": record["id"], "model": record["model"],
                             "family": record["family"]}
                if canonical_sha256(published, mform) != manifest[key].get(rid):
                    problems.append(f"{key}[{rid}]: the id, model and family do not hash to the "
                                    f"manifest's entry")
        copy_builder = {c["id"]: c["builder"] for c in report["copies"]}
        checks += 1
        if set(copy_builder) != set(manifest["copies"]):
            problems.append("copies: the ids differ from the manifest's")
        for c in report["copies"]:
            checks += 1
            if c["content_sha256"] != manifest["copies"].get(c["id"]):
                problems.append(f"copies[{c['id']}].content_sha256 differs from the manifest's")
        # A run imported before issue 25 item 7 has no bindings: its copies' builders are checked
        # against the mapping only, as they always were.
        if "bindings" in manifest:
            binding_problems, binding_checks = _verify_bindings(report["copies"],
                                                                manifest["bindings"])
            problems += binding_problems
            checks += binding_checks
        session_problems, session_checks = _verify_session(
            report["protocol"], report["judges"], report["assignments"],
            report["session"]["url_id"], copy_builder, place="")
        problems += session_problems
        checks += session_checks
        audited_problems, audited_checks = _verify_audited_reviewers(report)
        problems += audited_problems
        checks += audited_checks
        sample = report["protocol"]["frozen"].get("reasons_sample") or {}
        if sample.get("by") == "stratified":
            sample_problems, sample_checks = _verify_reasons_sample(report, sample)
            problems += sample_problems
            checks += sample_checks
        screening_problems, screening_checks = _verify_screening(report)
        problems += screening_problems
        checks += screening_checks
        # The run's adjudications used in the report (issue 29 item 2): each its own protocol,
        # commitment and drawn order, checked as the session's own are.
        for entry in (report.get("adjudicated") or {}).get("adjudications", []):
            if not entry.get("used"):
                continue
            place = f"adjudicated[session {entry['session']['id']}]."
            adj_problems, adj_checks = _verify_session(
                entry["protocol"], entry["judges"], entry["assignments"],
                entry["session"]["url_id"], copy_builder, place=place)
            problems += adj_problems
            checks += adj_checks
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        problems.append(f"the report is malformed: {type(error).__name__}: {error}")
    return problems, checks


def _verify_session(protocol: dict, judges: list, assignments: list, session_url_id: str,
                    copy_builder: dict, *, place: str) -> tuple[list[str], int]:
    """A session's frozen protocol against its hash, and each judge's commitment and drawn order
    against their mapping: the report's own session's, or an adjudication's (`place` prefixes
    what each problem names)."""
    problems: list[str] = []
    checks = 0
    pform = form_of(protocol["frozen"])
    _stated(protocol, "canonical", pform, "protocol.canonical", "the frozen protocol's",
            problems)
    checks += 1
    if canonical_sha256(protocol["frozen"], pform) != protocol["sha256"]:
        problems.append("protocol.sha256 does not match the frozen protocol")
    by_judge = defaultdict(list)
    for a in assignments:
        by_judge[a["judge"]].append(a)
    by_task = protocol["frozen"].get("by_task", False) is True
    item_task = {}
    task_items = defaultdict(set)
    if by_task:
        item_task = {i["key"]: i["task"] for i in protocol["frozen"]["items"]}
        for key, task in item_task.items():
            task_items[task].add(key)
    for judge in judges:
        pseudonym = judge["pseudonym"]
        commitment = judge["commitment"]
        mine = sorted(by_judge.get(pseudonym, []), key=lambda a: a["position"])
        # A judge commits in the form of the protocol in force when they joined.
        _stated(commitment, "canonical", pform, f"judges[{pseudonym}].commitment.canonical",
                "the frozen protocol's", problems)
        checks += 1
        recomputed = commitment_sha256(
            session_url_id=session_url_id, pseudonym=pseudonym,
            order_seed=commitment["order_seed"], salt=commitment["salt"], assignments=mine,
            canonical=pform,
        )
        if recomputed != commitment["sha256"]:
            problems.append(f"judges[{pseudonym}].commitment: the published mapping, order "
                            f"seed and salt do not hash to the published commitment")
        checks += 1
        items = [a["item"] for a in mine]
        if by_task:
            expected = draw_order_by_task(commitment["order_seed"],
                                          {item: item_task[item] for item in items})
        else:
            expected = draw_order(commitment["order_seed"], items)
        if items != expected:
            problems.append(f"judges[{pseudonym}]: positions are not the order drawn from "
                            f"the order seed" + (" (by task)" if by_task else ""))
        if by_task:
            checks += 1
            held = {item_task[item] for item in items}
            partial = sorted(t for t in held if not task_items[t] <= set(items))
            if partial:
                problems.append(f"judges[{pseudonym}]: a by-task judge holds only part of "
                                f"task {', '.join(partial)}")
        for a in mine:
            checks += 1
            if order_key(commitment["order_seed"], a["item"]) != a["order_key"]:
                problems.append(f"assignments[{pseudonym}/{a['position']}].order_key does "
                                f"not match HMAC(order seed, item)")
            checks += 1
            if copy_builder.get(a["copy"]) != a["builder"]:
                problems.append(f"assignments[{pseudonym}/{a['position']}]: builder "
                                f"{a['builder']!r} is not the builder of copy {a['copy']!r} "
                                f"in copies")
            if "second_copy" in a:
                # A pair: its second copy's builder, and the side drawn from the order seed.
                checks += 2
                if copy_builder.get(a["second_copy"]) != a["second_builder"]:
                    problems.append(f"assignments[{pseudonym}/{a['position']}]: builder "
                                    f"{a['second_builder']!r} is not the builder of copy "
                                    f"{a['second_copy']!r} in copies")
                if pair_swapped(commitment["order_seed"], a["item"]) != a["swapped"]:
                    problems.append(f"assignments[{pseudonym}/{a['position']}].swapped is not "
                                    f"the side drawn from the order seed")
    return [place + problem for problem in problems], checks


def _verify_audited_reviewers(report: dict) -> tuple[list[str], int]:
    """A reasons session's assignments name the reviewer audited (reports made before they did
    name none): each must be the reviewer of a default-condition review of the item's copy, the
    review the item's key names."""
    problems, checks = [], 0
    reviewed = {(r["reviewer"], r["copy"]) for r in report["reviews"] if r["default_condition"]}
    for a in report["assignments"]:
        if "reviewer" not in a:
            continue
        checks += 1
        if (a["reviewer"], a["copy"]) not in reviewed or \
                a["item"] != f"review:{a['reviewer']}:{a['copy']}":
            problems.append(f"assignments[{a['judge']}/{a['position']}]: reviewer "
                            f"{a['reviewer']!r} did not review copy {a['copy']!r} as item "
                            f"{a['item']!r} says")
    return problems, checks


def truth_at(report: dict, moment: str | None) -> dict:
    """Each copy's truth as it was at `moment` (ISO text): its current truth with every correction
    made after then undone, latest first."""
    truth = {c["id"]: c["truth"] for c in report["copies"]}
    for correction in sorted(report["truth_corrections"], key=lambda c: c["corrected_at"],
                             reverse=True):
        if moment is not None and correction["corrected_at"] > moment and \
                correction["item"] in truth:
            truth[correction["item"]] = correction["old_truth"]
    return truth


def _verify_reasons_sample(report: dict, sample: dict) -> tuple[list[str], int]:
    """A reasons session's stratified sample: the published seed against the frozen commitment,
    and the items as drawn again from the seed, the strata (reviewer × right, wrong or unscored
    verdict × truth class, with each copy's truth as it was when the session was created) and
    per_stratum (judging.services.reasons, content.draws.stratified_sample)."""
    problems, checks = [], 1
    seed = (report.get("reasons") or {}).get("sample", {}).get("seed") or ""
    if sha256_hex(bytes.fromhex(seed)) != sample["seed_sha256"]:
        problems.append("reasons.sample.seed does not hash to the protocol's seed_sha256")
    truth = truth_at(report, report["session"].get("created_at"))
    strata: dict = defaultdict(list)
    for review in report["reviews"]:
        if not review["default_condition"]:
            continue
        correctness, cls = audit_stratum(review["scored_as"], truth[review["copy"]])
        strata[f"{review['reviewer']}|{correctness}|{cls}"].append(
            f"review:{review['reviewer']}:{review['copy']}")
    checks += 1
    drawn = stratified_sample(strata, sample["per_stratum"], seed)
    frozen = sorted(item["key"] for item in report["protocol"]["frozen"]["items"])
    if drawn != frozen:
        problems.append("protocol.items: not the reviews drawn from the published seed per "
                        "stratum")
    return problems, checks
def _verify_screening(report: dict) -> tuple[list[str], int]:
    """The screening seed against the protocol's commitment, and the screening controls against
    what the seed draws; nothing where the protocol commits to none."""
    committed = report["protocol"]["frozen"].get("screening")
    if committed is None:
        return [], 0
    published = (report.get("preregistered_exclusions") or {}).get("screening")
    if not published or not published.get("seed"):
        return ["preregistered_exclusions.screening: the protocol commits to a screening seed, "
                "and the report publishes none"], 1
    problems = []
    seed = published["seed"]
    if sha256_hex(bytes.fromhex(seed)) != committed["seed_sha256"]:
        problems.append("preregistered_exclusions.screening.seed does not hash to the protocol's "
                        "screening.seed_sha256")
    truth = {c["id"]: c["truth"] for c in report["copies"]}
    controls = {i["key"]: truth[i["key"]] for i in report["protocol"]["frozen"]["items"]
                if truth.get(i["key"]) in CONTROL_TRUTHS}
    share = committed["share"]
    drawn = screening_items(seed, lambda n: screening_count(share, n), controls)
    if published["share"] != share or sorted(drawn) != published["items"]:
        problems.append("preregistered_exclusions.screening.items are not the controls the seed "
                        "draws at the protocol's share")
    return problems, 2


# A run/2 task's optional fields and the value the importer fills in when one is absent or null.
TASK_DEFAULTS = {"format": "markdown", "title": "", "cluster": ""}


def task_objects(task: dict):
    """Every task object a bundle could have held to be imported as this published task.

    The manifest hashes the task object exactly as it appeared, and the run record keeps the
    values only: an optional field holding its default may have been absent, null or written
    out, so each of those forms is tried (at most 27); a field holding anything else was written
    as it is. A changed statement, title, format or cluster matches none of them."""
    choices = []
    for key, default in TASK_DEFAULTS.items():
        value = task[key] if task[key] is not None else ""
        choices.append([(key, value)] if value != default else [None, (key, None), (key, default)])
    for chosen in product(*choices):
        yield {"id": task["id"], "statement": task["statement"], **dict(c for c in chosen if c)}


def _stated(published: dict, key: str, form: str, place: str, whose: str,
            problems: list[str]) -> None:
    """A form the report states for a reader (absent in reports exported before issue 15) must be
    the one the hashed object names: hashes are recomputed in the latter."""
    if key in published and form_named(published[key]) != form:
        problems.append(f"{place} is {published[key]!r}, not {whose} form {form!r}")


BOUND = ("task", "builder")  # the content: manifest["copies"]


def _verify_bindings(copies: list[dict], bindings: dict) -> tuple[list[str], int]:
    """Each published copy against the task and builder the manifest binds it to (its content
    against manifest["copies"], checked above)."""
    problems, checks = [], 1
    if {c["id"] for c in copies} != set(bindings):
        problems.append("copies: the ids differ from the manifest's bindings")
    for c in copies:
        checks += 1
        bound = bindings.get(c["id"])
        if bound is None:
            problems.append(f"copies[{c['id']}]: the manifest binds no task and builder to it")
            continue
        for field in BOUND:
            if c.get(field) != bound.get(field):
                problems.append(f"copies[{c['id']}].{field} is {c.get(field)!r}; the manifest "
                                f"binds the copy to {field} {bound.get(field)!r}")
    return problems, checks


def _verify_tasks(report: dict, manifest: dict, run_record: dict,
                  form: str) -> tuple[list[str], int]:
    """The published tasks against the manifest (run/2: each task's hash; run/1: the one statement
    the run object holds), and each copy's task among them."""
    problems, checks = [], 0
    tasks = {t["id"]: t for t in report["tasks"]}
    for t in report["tasks"]:
        checks += 1
        if sha256_hex(t["statement"].encode("utf-8")) != t["statement_sha256"]:
            problems.append(f"tasks[{t['id']}].statement_sha256 does not match the statement")
    checks += 1
    if "tasks" in manifest:
        if set(tasks) != set(manifest["tasks"]):
            problems.append("tasks: the ids differ from the manifest's")
        for tid, task in tasks.items():
            checks += 1
            hashes = {canonical_sha256(candidate, form) for candidate in task_objects(task)}
            if manifest["tasks"].get(tid) not in hashes:
                problems.append(f"tasks[{tid}]: the statement, title, format and cluster do not "
                                f"hash to the manifest's entry")
    elif list(tasks) != ["task"] or canonical_sha256(tasks["task"]["statement"], form) != \
            canonical_sha256(run_record.get("task"), form):
        problems.append('tasks: a run/1 bundle gives one task, "task", whose statement is the run '
                        "object's task")
    checks += 1
    strays = sorted({c["id"] for c in report["copies"] if c["task"] not in tasks})
    if strays:
        problems.append(f"copies {', '.join(strays)}: their task is not among the published tasks")
    return problems, checks
