"""Refusals every service raises, each with the HTTP status a view answers it with.

Services refuse with these and nothing else; views, consumers and commands turn them into a 4xx
answer, a closed socket or a CommandError with the same message. A database error escaping a
service is a bug.
"""


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
