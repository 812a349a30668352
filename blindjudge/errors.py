"""Refusals every service raises, each with the HTTP status a view answers it with.

Services refuse with these and nothing else; views, consumers and commands turn them into a 4xx
answer, a closed socket or a CommandError with the same message. A database error escaping a
service is a bug.

Below them, the error answers of the whole site (Django's handler400/403/404/500 and the CSRF
failure view): the usual pages, or JSON for a request that asked for it.
"""

from django.http import JsonResponse
from django.views import csrf, defaults


class ServiceError(Exception):
    status = 400
    code = "invalid"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class Invalid(ServiceError):
    """The input is wrong; the message says where."""


class NotFound(ServiceError):
    """Nothing there, or nothing the caller may see (the two are deliberately indistinguishable)."""

    status = 404
    code = "not_found"


class Conflict(ServiceError):
    """The request is well formed but the state forbids it now (locked, closed, revealed, used)."""

    status = 409
    code = "conflict"


class Refused(ServiceError):
    """A credential or code was not accepted. Always the same message, whatever the reason."""

    status = 403
    code = "refused"


class TooMany(Refused):
    """A limit on how often something may be done was reached; the message says which and when
    to try again. A Refused, so every caller that answers a refusal answers this one too."""

    status = 429
    code = "too_many"


# --- Answers to requests that want JSON (the judge page's autosave) --------------------------------
#
# Django answers a refusal or a crash with an HTML page; a script that asked for JSON then cannot
# tell "the server refused or failed" from "no connection". Every error answer below keeps
# Django's page for browsers and gives a request with `Accept: application/json` a JSON body
# {"error": code, "message": text} with the same status, nothing more (no traceback, no detail).

NOT_FOUND_MESSAGE = "Not found: there is nothing here, or nothing you may see."
SERVER_ERROR_MESSAGE = ("The server failed on its side (the error was logged); this was not "
                        "saved. Your last saved work is safe.")
CSRF_MESSAGE = ("Refused: this page's security token is missing or out of date. Reload the page "
                "and try again.")


def wants_json(request) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def json_error(status: int, code: str, message: str, **extra) -> JsonResponse:
    return JsonResponse({"error": code, "message": message, **extra}, status=status)


def bad_request(request, exception, template_name="400.html"):
    if wants_json(request):
        return json_error(400, "bad_request", "Bad request.")
    return defaults.bad_request(request, exception, template_name)


def permission_denied(request, exception, template_name="403.html"):
    if wants_json(request):
        return json_error(403, "refused", "Refused.")
    return defaults.permission_denied(request, exception, template_name)


def page_not_found(request, exception, template_name="404.html"):
    if wants_json(request):
        return json_error(404, NotFound.code, NOT_FOUND_MESSAGE)
    return defaults.page_not_found(request, exception, template_name)


def server_error(request, template_name="500.html"):
    # Django has logged the exception before calling this; nothing here may touch the database
    # (it may be what failed).
    if wants_json(request):
        return json_error(500, "server_error", SERVER_ERROR_MESSAGE)
    return defaults.server_error(request, template_name)


def csrf_failure(request, reason="", template_name=csrf.CSRF_FAILURE_TEMPLATE_NAME):
    if wants_json(request):
        return json_error(403, "csrf", CSRF_MESSAGE)
    return csrf.csrf_failure(request, reason, template_name)
