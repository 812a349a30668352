#!/usr/bin/env python3
"""Check a blindjudge report's published hashes without blindjudge: Python 3 (tested on 3.11),
standard library only.

    python3 verify_report_standalone.py REPORT.json [MORE.json ...] [--json]

Recomputes from the JSON report alone (an `export_report --format json` or `--format anon` file)
what `manage.py verify_report` recomputes: the run manifest's hash and the run, task, builder,
reviewer and copy records against it; each copy's task, builder and content against the
manifest's "bindings" (runs imported since the manifest binds them); the frozen protocol's hash;
each judge's commitment from their salt, order seed and mapping; each judge's drawn order
(HMAC-SHA256 of the order seed and item key; by task, the tasks interleaved); that the mapping's
builders are the copies' builders; where the protocol commits to a screening seed (an
exclude_judge rule), that the published seed hashes to it and draws the published screening
controls: of the seeded_defect and the known_good copies apart, the first ceil(share × n) in the
order HMAC-SHA256(seed, item key), the share read exactly as written.
It prints "verified: all N published hashes recompute", or each hash that does not (with --json,
one JSON object a file); it exits 0 when every file verifies, 1 when a hash does not recompute,
2 when a file cannot be read as a report.

Canonical JSON: every string (keys too) in Unicode NFC with CRLF and CR turned into LF, then the
form the hashed object names under "canonical": "jcs-rfc8785" is RFC 8785 (any JCS library gives
the same bytes after that text step); an object naming none was hashed in "blindjudge-json-1":
Python's json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False).
"""

import decimal
import hashlib
import heapq
import hmac
import json
import math
import sys
import unicodedata
from collections import defaultdict
from fractions import Fraction
from itertools import product

JCS, LEGACY = "jcs-rfc8785", "blindjudge-json-1"


def text(s):
    return unicodedata.normalize("NFC", s.replace("\r\n", "\n").replace("\r", "\n"))


class KeyCollision(ValueError):
    """Two keys of one object are one key after the text step."""


def normalised(v):
    out_keys = {}
    if isinstance(v, str):
        return text(v)
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            key = text(str(k))
            if key in out:  # one key after the text step: a hash would cover only one of them
                raise KeyCollision(f"the keys {ascii(str(k))} and {ascii(out_keys[key])} are one "
                                   f"key after the text step (NFC, LF line endings)")
            out[key] = normalised(x)
            out_keys[key] = str(k)
        return out
    if isinstance(v, (list, tuple)):
        return [normalised(x) for x in v]
    return v


def es_number(x):
    """ECMAScript's Number.prototype.toString of a double (RFC 8785 section 3.2.2.3)."""
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError(f"{x} is not representable in JSON")
    if x == 0:
        return "0"
    sign, digits, exp = decimal.Decimal(repr(abs(x))).as_tuple()  # repr: the shortest digits
    s = "".join(map(str, digits)).rstrip("0")
    k, n = len(s), len(digits) + exp  # x = 0.s × 10**n
    if k <= n <= 21:
        out = s + "0" * (n - k)
    elif 0 < n <= 21:
        out = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * -n + s
    else:
        e = n - 1
        out = (s[0] + ("." + s[1:] if k > 1 else "")) + "e" + ("+" if e > 0 else "-") + str(abs(e))
    return ("-" if x < 0 else "") + out


def jcs(v):
    """RFC 8785 text of a JSON value."""
    if v is None or isinstance(v, bool):
        return {None: "null", True: "true", False: "false"}[v]
    if isinstance(v, int):
        return str(v) if abs(v) <= 2**53 - 1 else es_number(float(v))
    if isinstance(v, float):
        return es_number(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # escapes exactly what RFC 8785 escapes
    if isinstance(v, list):
        return "[" + ",".join(jcs(x) for x in v) + "]"
    keys = sorted(v, key=lambda k: k.encode("utf-16-be"))  # UTF-16 code units
    return "{" + ",".join(jcs(k) + ":" + jcs(v[k]) for k in keys) + "}"


def form_of(obj):
    form = obj.get("canonical") if isinstance(obj, dict) else None
    if form not in (None, JCS, LEGACY):
        raise ValueError(f"unknown canonical form {form!r}; known: {JCS}, {LEGACY}")
    return form or LEGACY


def digest(value, form):
    value = normalised(value)
    if form == JCS:
        data = jcs(value)
    else:
        data = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def order_key(seed, key):
    return hmac.new(bytes.fromhex(seed), key.encode("utf-8"), hashlib.sha256).hexdigest()


def pair_swapped(seed, key):
    # A pair's side: the second copy on the left when the first byte of HMAC(order seed,
    # "side:" + key) is odd.
    return bool(int(order_key(seed, "side:" + key)[:2], 16) & 1)


def draw_order(seed, items):
    return sorted(items, key=lambda key: (order_key(seed, key), key))


def draw_order_by_task(seed, item_tasks):
    """Tasks interleaved: next, the task with the most items left that is not the previous
    item's, ties by HMAC(seed, "task:" + task); within a task, items by their order key."""
    queues = {}
    for item in sorted(item_tasks, key=lambda i: (order_key(seed, i), i), reverse=True):
        queues.setdefault(item_tasks[item], []).append(item)
    heap = [(-len(q), order_key(seed, f"task:{t}"), t) for t, q in queues.items()]
    heapq.heapify(heap)
    order, previous = [], None
    while heap:
        entry = heapq.heappop(heap)
        if entry[2] == previous and heap:
            entry, held = heapq.heappop(heap), entry
            heapq.heappush(heap, held)
        task = entry[2]
        order.append(queues[task].pop())
        if queues[task]:
            heapq.heappush(heap, (-len(queues[task]), entry[1], task))
        previous = task
    return order


def screening_items(seed, share, controls):
    """Of each control truth apart, the first ceil(share × n) of its n controls by HMAC(seed, key)."""
    chosen = set()
    for truth in ("seeded_defect", "known_good"):
        keys = sorted((k for k, t in controls.items() if t == truth),
                      key=lambda k: (order_key(seed, k), k))
        chosen.update(keys[:math.ceil(Fraction(repr(float(share))) * len(keys))])
    return chosen


def verify_screening(report):
    committed = report["protocol"]["frozen"].get("screening")
    if committed is None:
        return [], 0
    published = (report.get("preregistered_exclusions") or {}).get("screening")
    if not published or not published.get("seed"):
        return ["preregistered_exclusions.screening: the protocol commits to a screening seed, "
                "and the report publishes none"], 1
    problems = []
    seed = published["seed"]
    if hashlib.sha256(bytes.fromhex(seed)).hexdigest() != committed["seed_sha256"]:
        problems.append("preregistered_exclusions.screening.seed does not hash to the protocol's "
                        "screening.seed_sha256")
    truth = {c["id"]: c["truth"] for c in report["copies"]}
    controls = {i["key"]: truth[i["key"]] for i in report["protocol"]["frozen"]["items"]
                if truth.get(i["key"]) in ("seeded_defect", "known_good")}
    share = committed["share"]
    drawn = screening_items(seed, share, controls)
    if published["share"] != share or sorted(drawn) != published["items"]:
        problems.append("preregistered_exclusions.screening.items are not the controls the seed "
                        "draws at the protocol's share")
    return problems, 2


# What a pair's assignment commits besides (absent from every other kind's).
PAIR_KEYS = ("second_copy", "second_builder", "swapped", "first_code", "second_code")


def commitment(url_id, judge, c, mine, form):
    payload = {"commitment": 2 if form == JCS else 1}
    if form == JCS:
        payload["canonical"] = JCS
    payload.update(session=url_id, judge=judge, order_seed=c["order_seed"], salt=c["salt"],
                   assignments=[{k: a[k] for k in ("position", "code", "item", "copy", "builder",
                                                   *PAIR_KEYS) if k in a}
                                for a in mine])
    return digest(payload, form)


def task_objects(task):
    """Each task object the bundle could have held: an optional field at its default may have
    been absent, null or written out."""
    choices = []
    for key, default in {"format": "markdown", "title": "", "cluster": ""}.items():
        value = task[key] if task[key] is not None else ""
        choices.append([(key, value)] if value != default else [None, (key, None), (key, default)])
    for chosen in product(*choices):
        yield {"id": task["id"], "statement": task["statement"], **dict(c for c in chosen if c)}


def stated(published, key, form, place, whose, problems):
    if key in published and form_of({"canonical": published[key]}) != form:
        problems.append(f"{place} is {published[key]!r}, not {whose} form {form!r}")


DEFECTIVE = {"seeded_defect", "tests_fail", "real"}
GOOD = {"known_good", "tests_pass", "false_alarm"}


def verify_audited_reviewers(report):
    """A reasons session's assignments name the reviewer audited (older reports name none): the
    reviewer of a default-condition review of the item's copy, the review the item's key names."""
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


def verify_reasons_sample(report, sample):
    """A reasons session's stratified sample: the seed against its commitment, and the items as
    drawn again: per stratum (reviewer | correct, wrong or unscored | truth class, each copy's
    truth as it was when the session was created), the per_stratum reviews of lowest
    HMAC(seed, key)."""
    problems, checks = [], 1
    seed = (report.get("reasons") or {}).get("sample", {}).get("seed") or ""
    if hashlib.sha256(bytes.fromhex(seed)).hexdigest() != sample["seed_sha256"]:
        problems.append("reasons.sample.seed does not hash to the protocol's seed_sha256")
    truth = {c["id"]: c["truth"] for c in report["copies"]}
    created = report["session"].get("created_at")
    for c in sorted(report["truth_corrections"], key=lambda c: c["corrected_at"], reverse=True):
        if created is not None and c["corrected_at"] > created and c["item"] in truth:
            truth[c["item"]] = c["old_truth"]
    strata = defaultdict(list)
    for r in report["reviews"]:
        if not r["default_condition"]:
            continue
        t = truth[r["copy"]]
        cls = "defective" if t in DEFECTIVE else "good" if t in GOOD else None
        right = None if r["scored_as"] is None or cls is None else \
            (r["scored_as"] in ("fail", "real")) == (cls == "defective")
        correctness = "unscored" if right is None else "correct" if right else "wrong"
        strata[f"{r['reviewer']}|{correctness}|{cls or 'unknown'}"].append(
            f"review:{r['reviewer']}:{r['copy']}")
    checks += 1
    drawn = []
    for keys in strata.values():
        drawn += sorted(keys, key=lambda k: (order_key(seed, k), k))[:sample["per_stratum"]]
    if sorted(drawn) != sorted(i["key"] for i in report["protocol"]["frozen"]["items"]):
        problems.append("protocol.items: not the reviews drawn from the published seed per "
                        "stratum")
    return problems, checks


def verify_session(protocol, judges, assignments, url_id, copy_builder, place):
    """A session's protocol hash, and each judge's commitment and drawn order (the report's own
    session, or an adjudication's: `place` prefixes each problem)."""
    problems, checks = [], 0
    frozen = protocol["frozen"]
    pform = form_of(frozen)
    stated(protocol, "canonical", pform, "protocol.canonical", "the frozen protocol's",
           problems)
    checks += 1
    if digest(frozen, pform) != protocol["sha256"]:
        problems.append("protocol.sha256 does not match the frozen protocol")
    by_judge = defaultdict(list)
    for a in assignments:
        by_judge[a["judge"]].append(a)
    by_task = frozen.get("by_task", False) is True
    item_task = {i["key"]: i["task"] for i in frozen["items"]} if by_task else {}
    task_items = defaultdict(set)
    for key, task in item_task.items():
        task_items[task].add(key)
    for judge in judges:
        name, c = judge["pseudonym"], judge["commitment"]
        mine = sorted(by_judge.get(name, []), key=lambda a: a["position"])
        stated(c, "canonical", pform, f"judges[{name}].commitment.canonical",
               "the frozen protocol's", problems)
        checks += 1
        if commitment(url_id, name, c, mine, pform) != c["sha256"]:
            problems.append(f"judges[{name}].commitment: the published mapping, order seed "
                            f"and salt do not hash to the published commitment")
        checks += 1
        items = [a["item"] for a in mine]
        expected = (draw_order_by_task(c["order_seed"], {i: item_task[i] for i in items})
                    if by_task else draw_order(c["order_seed"], items))
        if items != expected:
            problems.append(f"judges[{name}]: positions are not the order drawn from the "
                            f"order seed" + (" (by task)" if by_task else ""))
        if by_task:
            checks += 1
            held = {item_task[i] for i in items}
            partial = sorted(t for t in held if not task_items[t] <= set(items))
            if partial:
                problems.append(f"judges[{name}]: a by-task judge holds only part of task "
                                f"{', '.join(partial)}")
        for a in mine:
            checks += 1
            if order_key(c["order_seed"], a["item"]) != a["order_key"]:
                problems.append(f"assignments[{name}/{a['position']}].order_key does not "
                                f"match HMAC(order seed, item)")
            checks += 1
            if copy_builder.get(a["copy"]) != a["builder"]:
                problems.append(f"assignments[{name}/{a['position']}]: builder "
                                f"{a['builder']!r} is not the builder of copy {a['copy']!r} "
                                f"in copies")
            if "second_copy" in a:
                checks += 2
                if copy_builder.get(a["second_copy"]) != a["second_builder"]:
                    problems.append(f"assignments[{name}/{a['position']}]: builder "
                                    f"{a['second_builder']!r} is not the builder of copy "
                                    f"{a['second_copy']!r} in copies")
                if pair_swapped(c["order_seed"], a["item"]) != a["swapped"]:
                    problems.append(f"assignments[{name}/{a['position']}].swapped is not the "
                                    f"side drawn from the order seed")
    return [place + problem for problem in problems], checks


def verify(report):
    """(problems, checks): the same checks, in the same order and words, as reports/verify.py."""
    problems, checks = [], 0
    try:
        run = report["run"]
        manifest = run["manifest"]
        mform = form_of(manifest)
        stated(run, "manifest_canonical", mform, "run.manifest_canonical", "the manifest's",
               problems)
        checks += 1
        if digest(manifest, mform) != run["manifest_sha256"]:
            problems.append("run.manifest_sha256 does not match the published manifest")
        checks += 1
        if manifest["bundle_sha256"] != run["bundle_sha256"]:
            problems.append("run.bundle_sha256 differs from the manifest's bundle_sha256")
        checks += 1
        record = run.get("record") or {"name": run["name"], "task": run["task"]}
        if digest(record, mform) != manifest["run"]:
            problems.append("run: the run record does not hash to the manifest's run entry")
        if "tasks" in report:
            tasks = {t["id"]: t for t in report["tasks"]}
            for t in report["tasks"]:
                checks += 1
                if hashlib.sha256(t["statement"].encode("utf-8")).hexdigest() != \
                        t["statement_sha256"]:
                    problems.append(f"tasks[{t['id']}].statement_sha256 does not match the "
                                    f"statement")
            checks += 1
            if "tasks" in manifest:
                if set(tasks) != set(manifest["tasks"]):
                    problems.append("tasks: the ids differ from the manifest's")
                for tid, task in tasks.items():
                    checks += 1
                    if manifest["tasks"].get(tid) not in {digest(t, mform)
                                                          for t in task_objects(task)}:
                        problems.append(f"tasks[{tid}]: the statement, title, format and cluster "
                                        f"do not hash to the manifest's entry")
            elif list(tasks) != ["task"] or digest(tasks["task"]["statement"], mform) != \
                    digest(record.get("task"), mform):
                problems.append('tasks: a run/1 bundle gives one task, "task", whose statement '
                                "is the run object's task")
            checks += 1
            strays = sorted({c["id"] for c in report["copies"] if c["task"] not in tasks})
            if strays:
                problems.append(f"copies {', '.join(strays)}: their task is not among the "
                                f"published tasks")
        for key in ("builders", "reviewers"):
            checks += 1
            records = {r["id"]: r for r in report[key]}
            if set(records) != set(manifest[key]):
                problems.append(f"{key}: the ids differ from the manifest's")
            for rid, r in records.items():
                checks += 1
                published = {"id": r["id"], "model": r["model"], "family": r["family"]}
                if digest(published, mform) != manifest[key].get(rid):
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
        if "bindings" in manifest:  # absent for a run imported before the manifest bound copies
            bindings = manifest["bindings"]
            checks += 1
            if set(copy_builder) != set(bindings):
                problems.append("copies: the ids differ from the manifest's bindings")
            for c in report["copies"]:
                checks += 1
                bound = bindings.get(c["id"])
                if bound is None:
                    problems.append(f"copies[{c['id']}]: the manifest binds no task and builder "
                                    f"to it")
                    continue
                for field in ("task", "builder"):  # the content: manifest["copies"], above
                    if c.get(field) != bound.get(field):
                        problems.append(f"copies[{c['id']}].{field} is {c.get(field)!r}; the "
                                        f"manifest binds the copy to {field} {bound.get(field)!r}")
        problems_, checks_ = verify_session(report["protocol"], report["judges"],
                                            report["assignments"], report["session"]["url_id"],
                                            copy_builder, "")
        problems += problems_
        checks += checks_
        problems_, checks_ = verify_audited_reviewers(report)
        problems += problems_
        checks += checks_
        sample = report["protocol"]["frozen"].get("reasons_sample") or {}
        if sample.get("by") == "stratified":
            problems_, checks_ = verify_reasons_sample(report, sample)
            problems += problems_
            checks += checks_
        problems_, checks_ = verify_screening(report)
        problems += problems_
        checks += checks_
        # The run's adjudications the report uses: each checked as the session itself is.
        for entry in (report.get("adjudicated") or {}).get("adjudications", []):
            if entry.get("used"):
                problems_, checks_ = verify_session(
                    entry["protocol"], entry["judges"], entry["assignments"],
                    entry["session"]["url_id"], copy_builder,
                    f"adjudicated[session {entry['session']['id']}].")
                problems += problems_
                checks += checks_
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        problems.append(f"the report is malformed: {type(error).__name__}: {error}")
    return problems, checks


def check_file(path, as_json):
    """Verify one file and print the verdict; 0 verified, 1 a hash failed, 2 not a report."""
    try:
        with open(path, encoding="utf-8") as handle:
            report = json.load(handle)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        print(f"{path} is not a readable JSON report: {error}", file=sys.stderr)
        return 2
    if not isinstance(report, dict):
        print(f"{path} is not a JSON report", file=sys.stderr)
        return 2
    problems, checks = verify(report)
    if as_json:
        print(json.dumps({"report": path, "verified": not problems, "checks": checks,
                          "problems": problems}, ensure_ascii=False))
    elif problems:
        print(f"{len(problems)} of {checks} checks failed:", *problems, sep="\n")
    else:
        print(f"verified: all {checks} published hashes recompute")
    return 1 if problems else 0


def main(argv):
    paths = [a for a in argv if a != "--json"]
    if not paths:
        print("usage: python3 verify_report_standalone.py REPORT.json [MORE.json ...] [--json]",
              file=sys.stderr)
        return 2
    statuses = []
    for path in paths:
        if len(paths) > 1 and "--json" not in argv:
            print(f"== {path}")
        statuses.append(check_file(path, "--json" in argv))
    return max(statuses)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
