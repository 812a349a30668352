"""The judge's commitment and the session protocol: what gets hashed, in one place.

Shared by the services that store the hashes and by `verify_report`, which recomputes them from a
published report alone. Pure: no Django.
"""

from content.canonical import canonical_sha256

COMMITMENT_VERSION = 1


def commitment_payload(*, session_url_id: str, pseudonym: str, order_seed: str, salt: str,
                       assignments: list[dict]) -> dict:
    """The salted mapping a judge commits to at joining.

    assignments: [{"position", "code", "item", "copy", "builder"}] — the judge's code → item →
    builder mapping in drawn order. The salt makes the hash reveal nothing before the reveal.
    """
    return {
        "commitment": COMMITMENT_VERSION,
        "session": session_url_id,
        "judge": pseudonym,
        "order_seed": order_seed,
        "salt": salt,
        "assignments": [
            {
                "position": a["position"], "code": a["code"], "item": a["item"],
                "copy": a["copy"], "builder": a["builder"],
            }
            for a in sorted(assignments, key=lambda a: a["position"])
        ],
    }


def commitment_sha256(**kwargs) -> str:
    return canonical_sha256(commitment_payload(**kwargs))
