"""The URLs that carry a credential, kept out of logs and Referer headers.

`/join/<token>` (single use) and `/resume/<token>` (a judge's standing credential) name the
credential in the path; GitHub's sign-in callback carries its one-time `code` and `state` in the
query string. Every log line written through Python logging (the ASGI server's access log, Django's
"Forbidden: /join/…" warnings) passes through `RedactCredentials`; nginx has the same rules as a
`map` in deploy/nginx/blindjudge.conf. The join and resume pages (and their refusals) are served
with `Referrer-Policy: strict-origin`, so the fetches they make (stylesheet, favicon, the form's
own POST) carry the site's origin as Referer, never the token path.
"""

import logging
import re

REDACTED = "[redacted]"
# A token path, wherever it appears in a line: "/join/<token>" up to a space, quote or query.
_TOKEN_PATH = re.compile(r"(/(?:join|resume)/)[^\s\"'?#]+")
# A one-time value in a query string (the OAuth callback's code and state; any `token=`).
_QUERY_SECRET = re.compile(r"([?&](?:code|state|token)=)[^\s\"'&#]+")
_CREDENTIAL_PAGE = re.compile(r"^/(?:join|resume)/")
REFERRER_POLICY = "strict-origin"


def redact(text: str) -> str:
    return _QUERY_SECRET.sub(rf"\1{REDACTED}", _TOKEN_PATH.sub(rf"\1{REDACTED}", text))


def is_credential_page(path: str) -> bool:
    return bool(_CREDENTIAL_PAGE.match(path))


class RedactCredentials(logging.Filter):
    """Rewrites a record's message with every credential redacted (the record is kept)."""

    def filter(self, record: logging.LogRecord) -> bool:
        # The message and its arguments separately, not the formatted line: Uvicorn's access
        # formatter takes the request line apart from `record.args`.
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: redact(v) if isinstance(v, str) else v for k, v in record.args.items()}
        return True


class CredentialPageReferrerPolicy:
    """Django middleware: the join and resume pages, whatever they answer, send only the site's
    origin as Referer (not `same-origin`'s full URL, which holds the token). Not `no-referrer`:
    with it Chromium sends `Origin: null` with the page's own form, which CSRF refuses."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if is_credential_page(request.path):
            response["Referrer-Policy"] = REFERRER_POLICY
        return response
