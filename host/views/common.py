"""What every host page shares: the rendering (no-store, the shown-once credential), the 303 after
a POST, the actor named in the audit log, untrusted text made visible.
"""

import re

from django.db.models import Count, Q
from django.http import HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse

from accounts.models import JudgeStatus
from content.normalise import BIDI_CLASS, INVISIBLE_CLASS, show_controls

# reports (and numpy under it, ~15 MB and 0.2 s per process) load on the first page that needs
# them — the planner, the report download — never in a process that serves only judges.

ONCE_KEY = "host:shown-once"
SPECIAL_CHARACTERS = re.compile(f"[{BIDI_CLASS}{INVISIBLE_CLASS}]")


class SeeOther(HttpResponseRedirect):
    status_code = 303


def actor_of(request) -> str:
    return f"host:{request.user.get_username()}"


def show_once(request, **payload):
    """Keep a credential for the next page only (see the module docstring)."""
    request.session[ONCE_KEY] = payload


def render_host_page(request, template: str, context: dict, status: int = 200) -> HttpResponse:
    context = {"once": request.session.pop(ONCE_KEY, None), "host": request.host, **context}
    response = render(request, template, context, status=status)
    response["Cache-Control"] = "no-store"
    return response


def not_post():
    return HttpResponseNotAllowed(["POST"])


def visible(text: str) -> str:
    """Untrusted one-line text (model output) with bidi and invisible characters shown."""
    return show_controls(text or "")


def session_url(session, name="session") -> str:
    return reverse(f"host:{name}", kwargs={"session_id": session.pk})


def progress_summary(session) -> dict:
    judges = session.judges.aggregate(
        joined=Count("id"),
        active=Count("id", filter=Q(status=JudgeStatus.ACTIVE)),
        removed=Count("id", filter=Q(status=JudgeStatus.REMOVED)),
        phase1_locked=Count("id", filter=Q(phase1_locked_at__isnull=False)),
        phase2_locked=Count("id", filter=Q(phase2_locked_at__isnull=False)),
    )
    return judges


def confirm_page(request, *, session, tab, title, consequences, action, button, form,
                  status=200):
    return render_host_page(request, "host/confirm.html", {
        "session": session, "run": session.run, "tab": tab, "title": title,
        "consequences": consequences, "action": action, "button": button, "form": form,
    }, status=status)
