"""Recompute every hash a report publishes, from the report alone. Pure: no Django, no database.

Checks: the run manifest's hash, and that the report's run, builders, reviewers and copies are
the records the manifest hashes (so a builder's identity cannot be swapped unseen); the frozen
protocol's hash; for each judge the commitment (salted canonical mapping) and the drawn order
(positions sorted by HMAC(order seed, item)); and that the mapping's copy → builder agrees with the
report's copies.
"""

from collections import defaultdict

from content.canonical import canonical_sha256
from content.commitments import commitment_sha256
from content.draws import draw_order, order_key


def verify(report: dict) -> tuple[list[str], int]:
    """(problems, number of checks made). An empty problem list means every hash recomputed."""
    problems: list[str] = []
    checks = 0
    try:
        manifest = report["run"]["manifest"]
        checks += 1
        if canonical_sha256(manifest) != report["run"]["manifest_sha256"]:
            problems.append("run.manifest_sha256 does not match the published manifest")
        checks += 1
        if manifest["bundle_sha256"] != report["run"]["bundle_sha256"]:
            problems.append("run.bundle_sha256 differs from the manifest's bundle_sha256")
        checks += 1
        # Reports exported before run/2 published the run/1 object's two fields, not the record.
        record = report["run"].get("record") or {"name": report["run"]["name"],
                                                 "task": report["run"]["task"]}
        if canonical_sha256(record) != manifest["run"]:
            problems.append("run: the run record does not hash to the manifest's run entry")
        for key in ("builders", "reviewers"):
            checks += 1
            records = {r["id"]: r for r in report[key]}
            if set(records) != set(manifest[key]):
                problems.append(f"{key}: the ids differ from the manifest's")
            for rid, record in records.items():
                checks += 1
                published = {"id": record["id"], "model": record["model"],
                             "family": record["family"]}
                if canonical_sha256(published) != manifest[key].get(rid):
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
        protocol = report["protocol"]
        checks += 1
        if canonical_sha256(protocol["frozen"]) != protocol["sha256"]:
            problems.append("protocol.sha256 does not match the frozen protocol")
        by_judge = defaultdict(list)
        for a in report["assignments"]:
            by_judge[a["judge"]].append(a)
        session_url_id = report["session"]["url_id"]
        for judge in report["judges"]:
            pseudonym = judge["pseudonym"]
            commitment = judge["commitment"]
            mine = sorted(by_judge.get(pseudonym, []), key=lambda a: a["position"])
            checks += 1
            recomputed = commitment_sha256(
                session_url_id=session_url_id, pseudonym=pseudonym,
                order_seed=commitment["order_seed"], salt=commitment["salt"], assignments=mine,
            )
            if recomputed != commitment["sha256"]:
                problems.append(f"judges[{pseudonym}].commitment: the published mapping, order "
                                f"seed and salt do not hash to the published commitment")
            checks += 1
            expected = draw_order(commitment["order_seed"], [a["item"] for a in mine])
            if [a["item"] for a in mine] != expected:
                problems.append(f"judges[{pseudonym}]: positions are not the order drawn from "
                                f"the order seed")
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
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        problems.append(f"the report is malformed: {type(error).__name__}: {error}")
    return problems, checks
