"""A test-only URL configuration: the product's URLs plus deliberately unsafe pages.

Every detector the leak and threat tests rely on (the canary scanner, the element and attribute
checker, the CSP check, the sequential-id and query-parameter checks, the byte comparison of twin
bundles, the no-traceback check) is first shown to fire on one of these pages; only then does its
silence on the product's pages count. This module lives under tests/ and is used only through
`override_settings(ROOT_URLCONF="tests.support.urls_unsafe")`: it never ships.
"""

from django.core import signing
from django.http import Http404, HttpResponse
from django.urls import path
from django.utils.text import slugify

from accounts.guards import judge_required
from accounts.models import Credential, Invitation, Judge
from blindjudge.urls import handler400, handler403, handler404, handler500  # noqa: F401 - the product's error answers
from blindjudge.urls import urlpatterns as product_urlpatterns
from judging.models import (
    Assignment,
    Builder,
    Copy,
    Finding,
    Item,
    Review,
    Reviewer,
    Run,
    Session,
    TaskFlag,
    Verdict,
)
from tests.support.leakcheck import encode


def planted_values(session: Session) -> list[str]:
    """Every host-only value of a session's run the way a careless page would read it: the run's
    name, builders, bundle ids, defect notes, reviewers, review reasons, authorship guesses, the
    requests reviews were made with and why their seals failed, and reviewer conditions;
    for every session on the run, every judge's name, GitHub login and id, reasons and task
    flags' reasons; and
    every database id."""
    run = session.run
    sessions = list(run.sessions.all())
    values = [run.name]
    for builder in run.builders.all():
        values += [builder.bundle_id, builder.model, builder.family]
    for copy in run.copies.all():
        values += [copy.bundle_id, copy.defect]
    values += list(Finding.objects.filter(run=run).values_list("bundle_id", flat=True))
    for reviewer in run.reviewers.all():
        values += [reviewer.bundle_id, reviewer.model, reviewer.family]
    for reason, guess, request, seal_reason in Review.objects.filter(run=run).values_list(
            "reason", "authorship_guess", "request", "seal_reason"):
        values += [reason, guess, request, seal_reason]
    # Reviewer conditions the host named (run/2); "clean", the bundle format's default, names
    # nothing of the run.
    values += sorted({run.default_condition, *Review.objects.filter(run=run)
                      .values_list("condition", flat=True)} - {"clean"})
    values += list(Judge.objects.filter(session__in=sessions).values_list("display_name", flat=True))
    for login, github_id in (Judge.objects.filter(session__in=sessions, github_id__isnull=False)
                             .values_list("github_login", "github_id")):
        values += [login, str(github_id)]
    values += list(Verdict.objects.filter(assignment__judge__session__in=sessions)
                   .values_list("reason", flat=True))
    # Judges' task flags: their reasons (issue 29 item 5).
    values += list(TaskFlag.objects.filter(judge__session__in=sessions)
                   .values_list("reason", flat=True))
    ids = [
        Run.objects.filter(pk=run.pk), Session.objects.filter(run=run),
        Builder.objects.filter(run=run), Copy.objects.filter(run=run),
        Reviewer.objects.filter(run=run), Review.objects.filter(run=run),
        Finding.objects.filter(run=run), Item.objects.filter(session__run=run),
        Assignment.objects.filter(judge__session__run=run),
        Verdict.objects.filter(assignment__judge__session__run=run),
        Judge.objects.filter(session__run=run), Invitation.objects.filter(session__run=run),
        Credential.objects.filter(session__run=run),
    ]
    for queryset in ids:
        values += [str(pk) for pk in queryset.values_list("pk", flat=True)]
    return [v for v in dict.fromkeys(values) if v]


def leaky_page(request, url_id):
    """Every planted value, in every form the scanner knows, in the body, the headers (ETag,
    Link, Content-Disposition, X-…) and cookies; a link with a database id; and an order that
    follows `?order=` (a hidden field a judge must never sort by)."""
    try:
        session = Session.objects.select_related("run").get(url_id=url_id)
    except Session.DoesNotExist:
        raise Http404("no such session") from None
    values = planted_values(session)
    if request.GET.get("order") == "builder":
        values = sorted(values)
    joined = "|".join(values)
    body = ["<!doctype html><html><head><title>unsafe</title></head><body>",
            f'<a href="/host/sessions/{session.pk}/">session</a>']
    for value in values:
        body.append(f"<!-- {encode(value, 'raw')} -->")
        body.append(f"<p>{slugify(value)}</p>")
        body.append(f'<p data-x="{encode(value, "html")}"></p>')
        body.append(f'<script type="application/json">"{encode(value, "json")}"</script>')
        body.append(f"<p>{encode(value, 'url')}</p>")
        body.append(f"<p>{encode(value, 'base64')}</p>")
    body.append("</body></html>")
    response = HttpResponse("\n".join(body), content_type="text/html; charset=utf-8")
    response["ETag"] = f'"{encode(joined, "hex")}"'
    response["Link"] = f"</static/x?c={encode(joined, 'url')}>; rel=preload"
    response["Content-Disposition"] = f"attachment; filename*=UTF-8''{encode(joined, 'url')}"
    for index, value in enumerate(values):
        response[f"X-Leak-{index}"] = value  # Django MIME-encodes (base64) what is not Latin-1
    response.set_cookie("leak", encode(joined, "base64"))
    response.set_cookie("sealed", signing.dumps(values, compress=True))
    return response


@judge_required
def raw_frame(request, url_id, code):
    """The judge's copy served as raw HTML: no escaping, no CSP, no sandbox."""
    content = Assignment.objects.filter(judge=request.judge, code=code).values_list(
        "item__copy__content", flat=True).first()
    if content is None:
        raise Http404("no such item")
    return HttpResponse(content, content_type="text/html; charset=utf-8")


@judge_required
def truth_dependent(request, url_id, code):
    """An item page whose length depends on the truth label (a byte-length leak)."""
    truth = Assignment.objects.filter(judge=request.judge, code=code).values_list(
        "item__copy__truth", flat=True).first()
    if truth is None:
        raise Http404("no such item")
    pad = " " * (len(truth) % 5)
    return HttpResponse(f"<!doctype html><p>Item {code}{pad}</p>",
                        content_type="text/html; charset=utf-8")


@judge_required
def first_side(request, url_id, code):
    """A pair's page that says which side its first copy is on (the earlier builder's, in import
    order): what no judge page may tell (docs/threats.md case 14e)."""
    swapped = Assignment.objects.filter(judge=request.judge, code=code).values_list(
        "swapped", flat=True).first()
    if swapped is None:
        raise Http404("no such item")
    return HttpResponse(f"<!doctype html><p>Pair {code}: its first copy is on the "
                        f"{'right' if swapped else 'left'}</p>",
                        content_type="text/html; charset=utf-8")


def boom(request):
    raise RuntimeError("unsafe-test-boom: secret detail sk_live_CANARYTRACE in /work/main/x.py")


urlpatterns = [
    *product_urlpatterns,
    path("unsafe/leak/<str:url_id>/", leaky_page, name="unsafe_leak"),
    path("unsafe/s/<str:url_id>/i/<str:code>/frame", raw_frame, name="unsafe_frame"),
    path("unsafe/s/<str:url_id>/i/<str:code>/truth", truth_dependent, name="unsafe_truth"),
    path("unsafe/s/<str:url_id>/i/<str:code>/first", first_side, name="unsafe_first_side"),
    path("unsafe/boom", boom, name="unsafe_boom"),
]
