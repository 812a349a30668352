"""Recompute every hash a report publishes, from the report alone. Pure: no Django, no database.

Checks: the run manifest's hash, the frozen protocol's hash, and for each judge the commitment
(salted canonical mapping) and the drawn order (positions sorted by HMAC(order seed, item)).
"""

from collections import defaultdict

from judging.canonical import canonical_sha256
from judging.commitments import commitment_sha256
from judging.draws import draw_order, order_key


def verify(report: dict) -> tuple[list[str], int]:
    """(problems, number of checks made). An empty problem list means every hash recomputed."""
    problems: list[str] = []
    checks = 0
    try:
        manifest = report["run"]["manifest"]
        checks += 1
        if canonical_sha256(manifest) != report["run"]["manifest_sha256"]:
            problems.append("run.manifest_sha256 does not match the published manifest")
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
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        problems.append(f"the report is malformed: {type(error).__name__}: {error}")
    return problems, checks
