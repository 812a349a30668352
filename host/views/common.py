"""What every host page shares: the rendering (no-store, the shown-once credential), the one shape
of a change (POST, form, service, 303), the actor named in the audit log, untrusted text made
visible.
"""

import re
from functools import wraps

from django.contrib import messages
from django.http import HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse

from accounts.guards import host_required
from blindjudge.errors import Conflict, Invalid
from content.normalise import BIDI_CLASS, INVISIBLE_CLASS, show_controls
from host.forms import add_service_error
from judging.selectors.host import run_for_host, session_for_host

ONCE_KEY = "host:shown-once"
SPECIAL_CHARACTERS = re.compile(f"[{BIDI_CLASS}{INVISIBLE_CLASS}]")


class SeeOther(HttpResponseRedirect):
    status_code = 303


def for_host_session(view):
    """Guards first: a signed-in host (`host_required`), then their own session by the id in the
    URL, which the view receives; another host's id is the same 404 as one that does not exist."""
    @host_required
    @wraps(view)
    def guarded(request, session_id, *args, **kwargs):
        return view(request, session_for_host(host=request.host, session_id=session_id), *args, **kwargs)

    return guarded


def for_host_run(view):
    """As for_host_session, for a run of the host's own."""
    @host_required
    @wraps(view)
    def guarded(request, run_id, *args, **kwargs):
        return view(request, run_for_host(host=request.host, run_id=run_id), *args, **kwargs)

    return guarded


def actor_of(request) -> str:
    return f"host:{request.user.get_username()}"


def show_once(request, **payload):
    """Keep a credential for the next page only (see host/views/__init__.py)."""
    request.session[ONCE_KEY] = payload


def render_host_page(request, template: str, context: dict, status: int = 200) -> HttpResponse:
    context = {"once": request.session.pop(ONCE_KEY, None), "host": request.host, **context}
    response = render(request, template, context, status=status)
    response["Cache-Control"] = "no-store"
    return response


def not_post():
    return HttpResponseNotAllowed(["POST"])


def host_change(request, *, change, page, form=None, refusals=(Invalid, Conflict),
                refused_on_page=(), refusal_on_both=False):
    """The one shape of every change a host makes from a page.

    Only a POST (anything else: 405). When the change has a form, it must validate, or `page`
    shows again with it (400). Then `change(cleaned_data)` calls one service and returns the
    message to show (if any) and the URL to go to, and the answer is a 303 there. A refusal among
    `refusals` shows `page` again with the service's message and status: on the form, when there
    is one, so the host finds it beside what they typed, and on the page otherwise. Refusals of a
    type in `refused_on_page` go on the page even beside a form (the form no longer applies: the
    draft it edits has opened); with `refusal_on_both` the message goes on the page and the form.

    `page(form=..., error=..., status=...)` renders the page the change was made from.
    """
    if request.method != "POST":
        return not_post()
    if form is not None and not form.is_valid():
        return page(form=form, status=400)
    try:
        message, url = change(form.cleaned_data if form is not None else None)
    except refusals as error:
        if form is None or isinstance(error, refused_on_page):
            return page(error=error.message, status=error.status)
        add_service_error(form, error.message)
        if refusal_on_both:
            return page(form=form, error=error.message, status=error.status)
        return page(form=form, status=error.status)
    if message:
        messages.success(request, message)
    return SeeOther(url)


def visible(text: str) -> str:
    """Untrusted one-line text (model output) with bidi and invisible characters shown."""
    return show_controls(text or "")


def session_url(session, name="session") -> str:
    return reverse(f"host:{name}", kwargs={"session_id": session.pk})


def confirm_page(request, *, session, tab, title, consequences, action, button, form,
                 status=200, alternatives=()):
    """`alternatives`: more submit buttons ({name, value, label}) beside `button`."""
    return render_host_page(request, "host/confirm.html", {
        "session": session, "run": session.run, "tab": tab, "title": title,
        "consequences": consequences, "action": action, "button": button, "form": form,
        "alternatives": alternatives,
    }, status=status)
