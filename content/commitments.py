"""The judge's commitment and the session protocol: what gets hashed, in one place.

Shared by the services that store the hashes and by `verify_report`, which recomputes them from a
published report alone. Pure: no Django.

A commitment is hashed in the canonical form of its session's frozen protocol (content.canonical):
a session frozen in RFC 8785 (JCS) commits its judges in version 2, whose payload names the form;
a session frozen before (no "canonical" in its protocol) in version 1, the legacy form, as before.
"""

from content.canonical import FORM_KEY, JCS, LEGACY, canonical_sha256, form_named

# The payload's version in each form: 1 hashed blindjudge-json-1, 2 hashed jcs-rfc8785.
COMMITMENT_VERSIONS = {LEGACY: 1, JCS: 2}
COMMITMENT_VERSION = COMMITMENT_VERSIONS[JCS]
# What a pairs session's assignment commits besides every assignment's keys (absent elsewhere, so
# every other commitment hashes as it always did).
PAIR_KEYS = ("second_copy", "second_builder", "swapped", "first_code", "second_code")


def commitment_payload(*, session_url_id: str, pseudonym: str, order_seed: str, salt: str,
                       assignments: list[dict], canonical: str = JCS) -> dict:
    """The salted mapping a judge commits to at joining.

    assignments: [{"position", "code", "item", "copy", "builder"}] — the judge's code → item →
    builder mapping in drawn order; a pair's also names its second copy and builder, the side
    drawn (`swapped`: the second copy on the left) and each copy's code (PAIR_KEYS), so the sides
    are committed like the order. The salt makes the hash reveal nothing before the reveal.
    `canonical`: the form it is hashed in (its protocol's); version 2 (JCS) names it in the
    payload, version 1 (legacy) is the payload as it always was.
    """
    form = form_named(canonical)
    payload = {"commitment": COMMITMENT_VERSIONS[form]}
    if form != LEGACY:
        payload[FORM_KEY] = form
    payload.update({
        "session": session_url_id,
        "judge": pseudonym,
        "order_seed": order_seed,
        "salt": salt,
        "assignments": [
            {
                "position": a["position"], "code": a["code"], "item": a["item"],
                "copy": a["copy"], "builder": a["builder"],
                **{key: a[key] for key in PAIR_KEYS if key in a},
            }
            for a in sorted(assignments, key=lambda a: a["position"])
        ],
    })
    return payload


def commitment_sha256(*, canonical: str = JCS, **kwargs) -> str:
    """SHA-256 of the commitment payload in the form `canonical` (the session protocol's)."""
    return canonical_sha256(commitment_payload(canonical=canonical, **kwargs),
                            form_named(canonical))
