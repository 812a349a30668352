"""How a credential is stored, and what a refused one is told: a leaf both the services that
admit judges and the judge's selectors read (the selectors never import the services).

Credentials (join tokens, resume tokens, guest codes) are stored only as SHA-256 hashes: each
carries at least 64 bits from the OS CSPRNG, so a plain hash is enough. Pure: no Django.
"""

import hashlib


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


# One message for every join link that does not admit (used, unknown, revoked, expired), so the
# answer never tells a used link from one that never existed (docs/threats.md case 16). Most who
# see it opened their invitation again after joining: it says first what they need then.
JOIN_REFUSAL = ("This join link works only once. If you already joined with it, you are in: use "
                "your resume link (shown when you joined) to come back. If you have not joined "
                "yet, the link was revoked or has expired: ask the host for a new one.")
GUEST_REFUSAL = "That guest code was not accepted."
GUEST_JOINS_REFUSAL = ("Too many guests have joined from your network address lately. Try again "
                       "in {minutes} minutes, or ask the host for an invitation.")
RESUME_REFUSAL = "This resume link is not valid. Ask the host for a new one."
GITHUB_REFUSAL = ("You are not invited to this session with this GitHub account. If you should be, "
                  "ask the host to list your GitHub login.")
