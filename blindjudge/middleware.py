"""Service refusals become pages with the refusal's status, from one place.

A view's guards come first and return 404 themselves; this catches what services refuse later
(409 for a locked phase, 400 for bad input), so no view repeats the mapping.
"""

from django.shortcuts import render

from blindjudge.errors import NOT_FOUND_MESSAGE, NotFound, ServiceError, json_error, wants_json


class ServiceErrorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, ServiceError):
            return None
        return service_error_response(request, exception)


def service_error_response(request, error: ServiceError):
    if wants_json(request):
        if isinstance(error, NotFound):
            return json_error(404, NotFound.code, NOT_FOUND_MESSAGE)  # as for a URL that is not there
        return json_error(error.status, error.code, error.message)
    if isinstance(error, NotFound):
        # Exactly the page of a URL that does not exist: a refusal must not tell "exists,
        # but not yours" from "nothing here".
        return render(request, "404.html", status=404)
    return render(request, "error.html", {"status": error.status, "message": error.message},
                  status=error.status)
