"""The verdicts back out, into the host's own evaluation output: what export_report's `inspect`
and `swebench-jsonl` formats write, built from the revealed report (reports.build.build_report)
and nothing else, so every truth and verdict is the one the report states.

Only a copies session exports: its items are copies, each one sample of a log (inspect) or one
prediction (SWE-bench); a findings session's verdicts are about findings, which neither format
has a place for. Only locked verdicts are exported: the report scores nothing else (a draft never
locked is counted apart, never scored).

inspect (`inspect_scores`, `log_metadata`, `plan_inspect`): each copy the inspect importer made
(task `<eval task>#<sample id>`, copy `<task>/<model>`, content the sample's output at the
imported epoch) gets, in a new copy of its log, scores named

- `blindjudge/truth`: the truth the report used (the imported label or its latest correction):
  value `C` for a good copy (tests_pass, known_good), `I` for a defective one (tests_fail,
  seeded_defect), NaN (inspect's "unscored", left out of its metrics) for unknown truth; answer
  the label itself; metadata the label, the imported label and every correction of the copy.
- `blindjudge/<judge>/phase<n>` for each judge (pseudonym only: no name leaves) who locked a
  verdict on the copy in phase n: value `C` when the judge passed the copy and `I` when they
  failed it: the judge's verdict itself, in the letters of inspect's own graders, so it reads
  beside a model grader's `C`/`I` and inspect's accuracy over it is that judge's pass rate;
  answer `pass`/`fail`; explanation the judge's reason; and in metadata whether the verdict was
  right against the truth used (`correct`: true, false, or null for unknown truth), the truth,
  the judge's group, the code and position the judge saw it at, the time spent, and in phase 2
  whether they kept their phase-1 verdict.

Each score carries inspect's own score-edit provenance (a history of one ScoreEdit: author
`blindjudge/<judge>` or `blindjudge`, the report's generation time, a reason, and as metadata the
session, the run, and the name and SHA-256 of the JSON report written beside the logs). Each new
log's header holds, under eval.metadata["blindjudge"], the same report reference, the epoch, what
the score names mean, and the calibration figures of the report: every judge's and every model
reviewer's recall and true-negative rate with their intervals (`scores.judges`,
`scores.reviewers`, as the report gives them). Calibration is a figure of the whole run, not of
one sample, so it is in the header, never repeated per sample.

Matching (`plan_inspect`): a sample of a log at `epoch` is the copy `<task>#<id>/<model>` of the
run when that copy exists with that task and builder model. The epoch a run was imported at is
not stored on the run, so the export is told it (`--epoch`, default 1, as the import) and checks
it: a sample whose output text is plain must hash to the copy's content_sha256, or the export is
refused (another epoch, a re-run log); a copy whose sample is in the logs at other epochs only is
refused likewise. A copy found in no log is reported, never silently dropped; samples of no copy
are left as they were; a log holding no copy is not written at all.

SWE-bench (`swebench_rows`): one row per copy the SWE-bench importer made (task = the
instance_id, copy `<builder>-<instance_id>`, builder model = model_name_or_path), keyed by
`instance_id` and `model_name_or_path`, with the truth used, the imported truth, whether the
instance was resolved by that truth, and every locked verdict by judge and phase.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict

from content.inspect_export import ExportError, ReadLog, added_score, write_log
from content.truth import truth_class

EXPORT_FORMAT = "blindjudge.inspect-export/1"
SWEBENCH_FORMAT = "blindjudge.swebench-verdicts/1"
TRUTH_SCORE = "blindjudge/truth"
MAX_LINES = 20  # reported copies not found, refusals: at most this many lines, then a count
PHASE_WORDS = {1: "phase 1, alone, before any model reviewer's verdict was shown",
               2: "phase 2, beside the model reviewers' verdicts"}


def judge_score_name(judge: str, phase: int) -> str:
    return f"blindjudge/{judge}/phase{phase}"


def require_copies_session(report: dict, fmt: str) -> None:
    if report["session"]["kind"] != "copies":
        raise ExportError([f"--format {fmt} exports a copies session's verdicts; session "
                           f"{report['session']['id']} judged {report['session']['kind']}"])


def capped(lines: list[str], cap: int = MAX_LINES) -> list[str]:
    return lines if len(lines) <= cap else [*lines[:cap], f"… and {len(lines) - cap} more"]


def _locked_verdicts(report: dict):
    """(copy id, verdict row) for every locked verdict, in the report's order."""
    item_copy = {a["item"]: a["copy"] for a in report["assignments"]}
    for verdict in report["verdicts"]:
        if verdict["locked"]:
            yield item_copy[verdict["item"]], verdict


def _corrections(report: dict) -> dict[str, list[dict]]:
    by_item = defaultdict(list)
    for correction in report["truth_corrections"]:
        by_item[correction["item"]].append(
            {"old_truth": correction["old_truth"], "new_truth": correction["new_truth"],
             "note": correction["note"], "corrected_at": correction["corrected_at"]})
    return by_item


# --- inspect -------------------------------------------------------------------------------------

def inspect_scores(report: dict, *, report_file: str, report_sha256: str) -> dict[str, dict]:
    """copy id -> {score name: Score} for every copy of the run (module docstring)."""
    session, run = report["session"]["id"], report["run"]["id"]
    when = report["generated_at"]
    provenance = {"session": session, "run": run, "report_file": report_file,
                  "report_sha256": report_sha256, "report_schema": report["schema"]}
    corrections = _corrections(report)
    scores: dict[str, dict] = {}
    for copy in report["copies"]:
        truth, cls = copy["truth"], truth_class(copy["truth"])
        fixes = corrections.get(copy["id"], [])
        said = f"{truth}" if not fixes else (
            f"{truth} (imported {copy['imported_truth']}; corrected: {fixes[-1]['note']})")
        scores[copy["id"]] = {TRUTH_SCORE: added_score(
            value={"good": "C", "defective": "I"}.get(cls, math.nan), answer=truth,
            explanation=f"The truth blindjudge session {session}'s report scored every judge "
                        f"against: {said}.",
            metadata={"truth": truth, "imported_truth": copy["imported_truth"],
                      "truth_class": cls, "corrections": fixes},
            author="blindjudge", timestamp=when,
            reason=f"the truth used by session {session}'s revealed report (the imported label "
                   "or its latest correction)",
            provenance=provenance)}
    groups = {j["pseudonym"]: j["group"] for j in report["judges"]}
    for copy_id, v in _locked_verdicts(report):
        judge, phase = v["judge"], v["phase"]
        metadata = {"judge": judge, "group": groups[judge], "phase": phase, "verdict": v["value"],
                    "truth": v["truth"], "correct": v["correct"], "code": v["code"],
                    "position": v["position"], "seconds_spent": v["seconds_spent"],
                    "saved_at": v["updated_at"]}
        if phase == 2:
            metadata["kept"] = v["kept"]
        scores[copy_id][judge_score_name(judge, phase)] = added_score(
            value="C" if v["value"] == "pass" else "I", answer=v["value"],
            explanation=v["reason"] or None, metadata=metadata,
            author=f"blindjudge/{judge}", timestamp=when,
            reason=f"a blinded human verdict ({PHASE_WORDS[phase]}) from session {session}'s "
                   "revealed report",
            provenance={**provenance, "judge": judge, "phase": phase})
    return scores


def log_metadata(report: dict, *, report_file: str, report_sha256: str, epoch: int) -> dict:
    """What each exported log's header holds under eval.metadata["blindjudge"]."""
    reviewers = {r["id"]: r for r in report["reviewers"]}
    return {
        "format": EXPORT_FORMAT,
        "session": {"id": report["session"]["id"], "kind": report["session"]["kind"],
                    "revealed_at": report["session"]["revealed_at"]},
        "run": {"id": report["run"]["id"], "name": report["run"]["name"],
                "manifest_sha256": report["run"]["manifest_sha256"]},
        "report": {"file": report_file, "sha256": report_sha256, "schema": report["schema"],
                   "generated_at": report["generated_at"]},
        "epoch": epoch,
        "scores": {
            TRUTH_SCORE: "the truth the report used: C good (tests_pass, known_good), I defective "
                         "(tests_fail, seeded_defect), NaN unknown (unscored); answer the label",
            "blindjudge/<judge>/phase<n>": "a judge's locked verdict in phase n (1 alone, 2 "
                                           "beside the model reviewers): C pass, I fail; "
                                           "metadata.correct: whether it matches the truth used "
                                           "(null for unknown truth)",
        },
        "definitions": report["scores"]["definitions"],
        "judges": report["scores"]["judges"],
        "model_reviewers": [
            {"model": reviewers[r["reviewer"]]["model"],
             "family": reviewers[r["reviewer"]]["family"], **r}
            for r in report["scores"]["reviewers"]
        ],
    }


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def plan_inspect(report: dict, logs: list[tuple[ReadLog, bytes]], *, epoch: int,
                 report_file: str, report_sha256: str) -> dict:
    """The new logs' bytes and what was matched: {"logs": [(log name, bytes, copies)],
    "matched", "unchecked", "not_found": [copy id], "untouched_logs": [name]}; ExportError
    (nothing to be written) on a refusal (module docstring)."""
    require_copies_session(report, "inspect")
    copies = {c["id"]: c for c in report["copies"]}
    models = {b["id"]: b["model"] for b in report["builders"]}
    matched: dict[str, tuple[ReadLog, object]] = {}
    other_epochs: dict[str, set] = defaultdict(set)
    refusals, unchecked = [], 0
    for log, _ in logs:
        for sample in log.samples:
            task_id = f"{log.task}#{sample.key}"
            copy = copies.get(f"{task_id}/{log.model}")
            if copy is None or copy["task"] != task_id or models[copy["builder"]] != log.model:
                continue
            if sample.epoch != epoch:
                other_epochs[copy["id"]].add(sample.epoch)
                continue
            if copy["id"] in matched:
                refusals.append(f"{sample.where}: {copy['id']} is also in "
                                f"{matched[copy['id']][1].where}; give each log once")
                continue
            matched[copy["id"]] = (log, sample)
            if sample.plain_output is None:
                unchecked += 1
            elif _sha256(sample.plain_output) != copy["content_sha256"]:
                refusals.append(f"{sample.where}: its output is not copy {copy['id']} as imported "
                                "(another epoch than the import's, or a log run again?)")
    for copy_id in copies:  # in the report's order
        epochs = other_epochs.get(copy_id)
        if epochs and copy_id not in matched:
            shown = ", ".join(str(e) for e in sorted(epochs, key=str))
            refusals.append(f"{copy_id}: no sample at epoch {epoch} in the logs (epochs {shown}); "
                            "export with the --epoch the run was imported at")
    if refusals:
        raise ExportError(capped(refusals))
    if not matched:
        raise ExportError([f"no sample of these logs at epoch {epoch} is a copy of run "
                           f"{report['run']['id']} (an inspect import names its copies "
                           "<eval task>#<sample id>/<model>)"])
    scores = inspect_scores(report, report_file=report_file, report_sha256=report_sha256)
    metadata = log_metadata(report, report_file=report_file, report_sha256=report_sha256,
                            epoch=epoch)
    written, untouched = [], []
    for log, data in logs:
        wanted = {(sample.key, sample.epoch): scores[copy_id]
                  for copy_id, (owner, sample) in matched.items() if owner is log}
        if not wanted:
            untouched.append(log.name)
            continue
        written.append((log.name, write_log(log.name, data, wanted, metadata), len(wanted)))
    return {"logs": written, "matched": len(matched), "unchecked": unchecked,
            "not_found": [c for c in copies if c not in matched], "untouched_logs": untouched}


# --- SWE-bench -----------------------------------------------------------------------------------

def swebench_rows(report: dict) -> list[dict]:
    """One row per copy, keyed by instance_id and model_name_or_path (module docstring)."""
    require_copies_session(report, "swebench-jsonl")
    models = {b["id"]: b["model"] for b in report["builders"]}
    odd = [c["id"] for c in report["copies"] if c["id"] != f"{c['builder']}-{c['task']}"]
    if odd:
        raise ExportError([f"run {report['run']['id']} was not imported from SWE-bench: copy "
                           f"{odd[0]} is not named <builder>-<instance_id>"])
    groups = {j["pseudonym"]: j["group"] for j in report["judges"]}
    verdicts = defaultdict(list)
    for copy_id, v in _locked_verdicts(report):
        row = {"judge": v["judge"], "group": groups[v["judge"]], "phase": v["phase"],
               "verdict": v["value"], "correct": v["correct"], "reason": v["reason"]}
        if v["phase"] == 2:
            row["kept"] = v["kept"]
        verdicts[copy_id].append(row)
    corrections = _corrections(report)
    return [
        {"instance_id": c["task"], "model_name_or_path": models[c["builder"]],
         "truth": c["truth"], "imported_truth": c["imported_truth"],
         "resolved": {"good": True, "defective": False}.get(truth_class(c["truth"])),
         "corrections": corrections.get(c["id"], []),
         "verdicts": verdicts[c["id"]], "copy": c["id"], "session": report["session"]["id"],
         "format": SWEBENCH_FORMAT}
        for c in report["copies"]
    ]


def swebench_jsonl(report: dict) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n"
                   for row in swebench_rows(report)).encode("utf-8")
