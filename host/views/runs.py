"""The host's runs: the list, importing a bundle, a run's page, creating a session on it, correcting
a truth label.
"""

from django.conf import settings
from django.contrib import messages
from django.db.models import Count
from django.db.models.functions import Length
from django.urls import reverse

from accounts.guards import host_required
from blindjudge import links
from blindjudge.errors import Conflict, Invalid, NotFound
from host.forms import BundleUploadForm, SessionCreateForm, TruthForm, add_service_error
from host.views.common import SeeOther, actor_of, not_post, render_host_page, session_url, show_once, visible
from judging.selectors.host import run_for_host
from judging.services import run_import, session_create, truth_correct


def _runs_page(request, form=None, status=200):
    runs = (request.host.runs.order_by("-imported_at", "-pk")
            .annotate(copy_count=Count("copies", distinct=True),
                      finding_count=Count("findings", distinct=True))
            .prefetch_related("sessions"))
    return render_host_page(request, "host/runs.html",
                   {"runs": runs, "form": form or BundleUploadForm()}, status=status)


@host_required
def runs(request):
    return _runs_page(request)


@host_required
def run_import_view(request):
    if request.method != "POST":
        return not_post()
    form = BundleUploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return _runs_page(request, form, status=400)
    upload = form.cleaned_data["bundle"]
    limit = settings.BLINDJUDGE_MAX_BUNDLE_BYTES
    if upload.size > limit:
        # Read nothing of a file we would refuse anyway.
        form.add_error("bundle", f"bundle: {upload.size} bytes exceeds the limit of {limit} bytes")
        return _runs_page(request, form, status=400)
    try:
        run = run_import(host=request.host, raw=upload.read(), actor=actor_of(request))
    except Invalid as error:
        add_service_error(form, error.message)
        return _runs_page(request, form, status=400)
    messages.success(request, f"Run {run.pk} imported: {run.copies.count()} copies, "
                              f"{run.findings.count()} findings.")
    return SeeOther(reverse("host:run", kwargs={"run_id": run.pk}))


def _run_page(request, run, session_form=None, status=200):
    # Copies can be megabytes each: count their characters in the database, load none.
    copies = list(run.copies.select_related("builder").defer("content")
                  .annotate(characters=Length("content")))
    findings = list(run.findings.select_related("copy").prefetch_related("raised_by"))
    reviews = list(run.reviews.select_related("reviewer", "copy"))
    corrections = list(run.truth_corrections.select_related("copy", "finding"))
    context = {
        "run": run,
        "builders": list(run.builders.all()),
        "copies": [{"copy": c, "defect": visible(c.defect)} for c in copies],
        "reviewers": list(run.reviewers.all()),
        "reviews": [{"review": r, "reason": visible(r.reason),
                     "seal_reason": visible(r.seal_reason)} for r in reviews],
        "findings": [{"finding": f, "text": visible(f.text),
                      "raised_by": ", ".join(r.bundle_id for r in f.raised_by.all())}
                     for f in findings],
        "corrections": [{"correction": c, "item": (c.copy or c.finding).bundle_id,
                         "kind": "copy" if c.copy_id else "finding", "note": visible(c.note)}
                        for c in corrections],
        "sessions": list(run.sessions.annotate(judge_count=Count("judges")).order_by("pk")),
        "session_form": session_form or SessionCreateForm(),
        "task": run.task,
    }
    return render_host_page(request, "host/run.html", context, status=status)


@host_required
def run_detail(request, run_id):
    run = run_for_host(host=request.host, run_id=run_id)
    return _run_page(request, run)


@host_required
def session_create_view(request, run_id):
    run = run_for_host(host=request.host, run_id=run_id)
    if request.method != "POST":
        return not_post()
    form = SessionCreateForm(request.POST)
    if not form.is_valid():
        return _run_page(request, run, form, status=400)
    data = form.cleaned_data
    try:
        created = session_create(
            run=run, kind=data["kind"], actor=actor_of(request), rubric=data["rubric"],
            preregistration=data["preregistration"], items_per_judge=data["items_per_judge"],
            guests_allowed=data["guests_allowed"], guest_cap=data["guest_cap"],
            reviewer_display=data["reviewer_display"], scorecards=data["scorecards"],
        )
    except Invalid as error:
        add_service_error(form, error.message)
        return _run_page(request, run, form, status=400)
    if created.guest_code:
        show_once(request, kind="guest_code", session=created.session.pk,
                   code=created.guest_code, guest_page=links.guest_page())
    messages.success(request, f"Draft session {created.session.pk} created.")
    return SeeOther(session_url(created.session))


def _item_for_truth(run, kind, position):
    model = run.copies if kind == "copy" else run.findings
    item = model.filter(position=position).first()
    if item is None:
        raise NotFound(f"run {run.pk} has no {kind} {position}")
    return item


def _truth_page(request, run, kind, item, form=None, status=200):
    history = run.truth_corrections.filter(**{kind: item})
    context = {
        "run": run, "kind": kind, "item": item, "history": history,
        "form": form or TruthForm(finding=kind == "finding"),
        "defect": visible(getattr(item, "defect", "")),
        "text": visible(getattr(item, "text", "")),
    }
    return render_host_page(request, "host/truth.html", context, status=status)


@host_required
def truth_correct_view(request, run_id, kind, position):
    run = run_for_host(host=request.host, run_id=run_id)
    item = _item_for_truth(run, kind, position)
    if request.method != "POST":
        return _truth_page(request, run, kind, item)
    form = TruthForm(request.POST, finding=kind == "finding")
    if not form.is_valid():
        return _truth_page(request, run, kind, item, form, status=400)
    try:
        truth_correct(run=run, item=item.bundle_id, truth=form.cleaned_data["truth"],
                      note=form.cleaned_data["note"], actor=actor_of(request))
    except (Invalid, Conflict) as error:
        add_service_error(form, error.message)
        return _truth_page(request, run, kind, item, form, status=error.status)
    messages.success(request, f'Truth of {kind} "{visible(item.bundle_id)}" corrected to '
                              f'{form.cleaned_data["truth"]}.')
    return SeeOther(reverse("host:run", kwargs={"run_id": run.pk}) + "#corrections")
