"""The host's runs: the list, importing a bundle, a run's page, creating a session on it, correcting
a truth label.
"""

from django.contrib import messages
from django.urls import reverse

from accounts.guards import host_required
from blindjudge import links
from blindjudge.errors import Invalid
from blindjudge.memory import trim_heap
from content.importers.common import ConversionError, Source
from content.importers.conversion import ImportRequest, bundle_bytes, summary_lines
from content.pairs_plan import DESIGN_EFFECT
from host.forms import PairsPlanForm, RunImportForm, SessionCreateForm, TruthForm
from host.views.common import (
    actor_of,
    for_host_run,
    host_change,
    render_host_page,
    session_url,
    show_once,
    visible,
)
from judging.importing import convert
from judging.selectors.host import (
    REVIEWS_PER_PAGE,
    RUN_LISTS,
    adjudicated_on_run,
    run_item,
    run_overview,
    run_reviews_page,
    run_sizes,
    runs_of_host,
    truth_history,
)
from judging.services import (
    pairs_overview,
    pairs_plan_on,
    run_import,
    session_create,
    truth_correct,
)


def _runs_page(request, form=None, status=200, error=None):
    return render_host_page(request, "host/runs.html", {
        "runs": runs_of_host(request.host), "form": form or RunImportForm(),
    }, status=status)


@host_required
def runs(request):
    return _runs_page(request)


@host_required
def run_import_view(request):
    def change(data):
        if data["source"] == "bundle":
            raw, summary, places = data["bundle"].read(), None, None
        else:
            imported = _converted(data)
            raw, summary, places = bundle_bytes(imported), imported.summary, imported.places
        run = run_import(host=request.host, raw=raw, actor=actor_of(request), places=places,
                         again=data["again"])
        if summary is not None:
            for line in summary_lines(summary):
                messages.info(request, line)
        copies, findings = run_sizes(run)
        return (f"Run {run.pk} imported: {copies} copies, {findings} findings.",
                reverse("host:run", kwargs={"run_id": run.pk}))

    try:
        return host_change(request, form=RunImportForm(request.POST, request.FILES),
                           change=change, refusals=(Invalid,),
                           page=lambda **shown: _runs_page(request, **shown))
    finally:
        # The files, the bundle and its parse are freed by now: their heap goes back to the
        # system rather than staying resident after each import (blindjudge/memory.py).
        trim_heap()


def _tables_per_builder(data) -> list[tuple[str, object]]:
    """(model, upload) for each table of outputs per builder, named on its line MODEL=FILE NAME;
    a file no line names, or a line naming no file, is refused (Invalid), nothing converted."""
    uploads = {upload.name: upload for upload in data.get("outputs_per_builder") or []}
    out, problems = [], []
    for line in (data.get("per_builder_models") or "").splitlines():
        if not line.strip():
            continue
        model, equals, name = line.partition("=")
        if not equals or not model.strip() or not name.strip():
            problems.append(f'Builder of each table: "{line.strip()}" is not MODEL=FILE NAME')
        elif name.strip() not in uploads:
            problems.append(f'Builder of each table: no table of outputs named "{name.strip()}" '
                            "was uploaded")
        else:
            out.append((model.strip(), uploads.pop(name.strip())))
    problems += [f"Builder of each table: name the builder of {name} (MODEL={name})"
                 for name in uploads]
    if problems:
        raise Invalid("\n".join(problems))
    return out


def _converted(data):
    """The host's files and options to a run/2 bundle; a ConversionError, every line of it, is
    refused like the validator's refusals (nothing is written either way)."""
    def one(upload):
        return Source(upload.name, upload.read()) if upload else None

    def text(name):
        return (data.get(name) or "").strip()

    source = data["source"]
    table = source in ("jsonl", "csv")
    per_builder = _tables_per_builder(data) if table else []
    request_ = ImportRequest(
        format=source, outputs=one(data.get("outputs")) if table else None,
        reviews=one(data.get("reviews")) if table else None,
        predictions=[one(u) for u in data.get("predictions") or []] if source == "swebench" else [],
        reports=[one(u) for u in data.get("reports") or []] if source == "swebench" else [],
        dataset=one(data.get("dataset")) if source == "swebench" else None,
        logs=[one(u) for u in data.get("logs") or []] if source == "inspect" else [],
        column_map=text("column_map"), values=text("values"), review_map=text("review_map"),
        builder=text("builder") or None, builder_family=text("builder_family") or None,
        copy_format=data.get("copy_format") or "text", instances=data.get("instances"),
        seed=text("seed") or "0",
        instance_ids=[text("instance_ids")] if source == "swebench" and text("instance_ids") else [],
        instances_file=one(data.get("instances_file")) if source == "swebench" else None,
        empty_patch=data.get("empty_patch") or "fail",
        truth_scorer=text("truth_scorer") or None,
        truth_values=text("truth_values"), review_scorer=text("review_scorer") or None,
        grader=text("grader") or None,
        epoch=data.get("epoch") or 1,
        families=[line.strip() for line in text("families").splitlines() if line.strip()],
        name=text("name"), truth_equals=text("truth_equals") if table else "",
        cluster=text("cluster"),
        outputs_per_builder=[one(upload) for _, upload in per_builder],
        per_builder_models=[model for model, _ in per_builder])
    try:
        return convert(request_)
    except ConversionError as error:
        raise Invalid("\n".join(error.lines())) from None


# A reviewer's seal outcomes on the run's page: (words, the row's count, the class a set-apart
# outcome is marked with), in this order; the cell lists those counted.
SEAL_COUNTS = (("sealed", "sealed", ""),
               ("keys sealed, verdict in content", "verdict_in_content",
                "seal seal-verdict_in_content"),
               ("failed", "seal_failed", "seal seal-failed"),
               ("absent", "absent", ""))


def _seal_counts(row: dict) -> list[tuple[str, int, str]]:
    return [(words, row[key], marked) for words, key, marked in SEAL_COUNTS if row[key]]


def _run_page(request, run, form=None, status=200, error=None):
    listed = run_overview(run, {name: request.GET.get(name) for name in RUN_LISTS})
    adjudicated = adjudicated_on_run(run)  # beside each truth, never over it
    context = {
        "run": run,
        "builders": listed["builders"],
        "copies_page": listed["copies"], "findings_page": listed["findings"],
        "tasks_page": listed["tasks"], "copy_truths": listed["copy_truths"],
        # Each list's page links keep the pages the other lists are on (their numbers only).
        "keep": {name: "&".join(f"{other}={listed[other].number}" for other in RUN_LISTS
                                if other != name and listed[other].number != 1)
                 for name in RUN_LISTS},
        "copies": [{"copy": c, "defect": visible(c.defect),
                    "adjudicated": adjudicated.get(("copy", c.pk))} for c in listed["copies"]],
        "reviewers": listed["reviewers"],
        "review_counts": [{**row, "seals": _seal_counts(row)} for row in listed["review_counts"]],
        "review_total": sum(row["reviews"] for row in listed["review_counts"]),
        "reviews_per_page": REVIEWS_PER_PAGE,
        "findings": [{"finding": f, "text": visible(f.text),
                      "adjudicated": adjudicated.get(("finding", f.pk)),
                      "raised_by": ", ".join(
                          raise_.reviewer.bundle_id if raise_.condition == run.default_condition
                          else f"{raise_.reviewer.bundle_id} ({raise_.condition})"
                          for raise_ in f.findingraise_set.all())}
                     for f in listed["findings"]],
        "corrections": [{"correction": c, "item": (c.copy or c.finding).bundle_id,
                         "kind": "copy" if c.copy_id else "finding", "note": visible(c.note)}
                        for c in listed["corrections"]],
        "sessions": listed["sessions"],
        "session_form": form or SessionCreateForm(),
        "tasks": [{"task": t, "title": visible(t.title)} for t in listed["tasks"]],
    }
    return render_host_page(request, "host/run.html", context, status=status)


@for_host_run
def run_detail(request, run):
    return _run_page(request, run)


@for_host_run
def run_reviews(request, run):
    """The run's reviews, a page at a time (`?page=N`): each with its reason and its seal."""
    page = run_reviews_page(run, request.GET.get("page"))
    context = {
        "run": run, "page": page,
        "reviews": [{"review": r, "reason": visible(r.reason),
                     "seal_reason": visible(r.seal_reason),
                     "content_verdict": visible(r.content_verdict)} for r in page],
    }
    return render_host_page(request, "host/run_reviews.html", context)


@for_host_run
def session_create_view(request, run):
    def change(data):
        created = session_create(
            run=run, kind=data["kind"], actor=actor_of(request), rubric=data["rubric"],
            preregistration=data["preregistration"], items_per_judge=data["items_per_judge"],
            guests_allowed=data["guests_allowed"], guest_cap=data["guest_cap"],
            reviewer_display=data["reviewer_display"], scorecards=data["scorecards"],
            by_task=data["by_task"], advance_on_key=data["advance_on_key"],
            mark_disagreement=data["mark_disagreement"],
            verdict_min_shown_ms=data["verdict_min_shown_ms"], task_flags=data["task_flags"],
            unknown_copies=data["unknown_copies"], adjudicate_findings=data["adjudicate_findings"],
            adjudicate_copies=data["adjudicate_copies"],
            reasons_per_stratum=data["reasons_per_stratum"],
            pairs_design=data["pairs_design"] or None, pairs_count=data["pairs_count"],
        )
        if created.guest_code:
            show_once(request, kind="guest_code", session=created.session.pk,
                      code=created.guest_code, guest_page=links.guest_page())
        return f"Draft session {created.session.pk} created.", session_url(created.session)

    return host_change(request, form=SessionCreateForm(request.POST), change=change,
                       refusals=(Invalid,), page=lambda **shown: _run_page(request, run, **shown))


def _truth_page(request, run, kind, item, form=None, status=200, error=None):
    context = {
        "run": run, "kind": kind, "item": item, "history": truth_history(run, kind, item),
        "form": form or TruthForm(finding=kind == "finding"),
        "defect": visible(getattr(item, "defect", "")),
        "text": visible(getattr(item, "text", "")),
    }
    return render_host_page(request, "host/truth.html", context, status=status)


@for_host_run
def truth_correct_view(request, run, kind, position):
    item = run_item(run, kind, position)
    if request.method != "POST":
        return _truth_page(request, run, kind, item)

    def change(data):
        truth_correct(run=run, item=item.bundle_id, truth=data["truth"], note=data["note"],
                      actor=actor_of(request))
        return (f'Truth of {kind} "{visible(item.bundle_id)}" corrected to {data["truth"]}.',
                reverse("host:run", kwargs={"run_id": run.pk}) + "#corrections")

    return host_change(request, form=TruthForm(request.POST, finding=kind == "finding"),
                       change=change, page=lambda **shown: _truth_page(request, run, kind, item, **shown))


@for_host_run
def pairs_planner(request, run):
    """Before a pairs session: how many answers and judges a target needs on this run's pairs
    (content.pairs_plan; the `plan_pairs` command's figures). A read: nothing is stored."""
    form = PairsPlanForm(request.GET or None)
    overview = pairs_overview(run)
    plan = error = None
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        try:
            plan = pairs_plan_on(run, data["half_width"], target=data["target"],
                                 pairs_per_judge=data["pairs_per_judge"],
                                 design_effect=data["design_effect"] or DESIGN_EFFECT,
                                 overview=overview)
        except Invalid as problem:
            error = problem.message
    return render_host_page(request, "host/pairs_planner.html", {
        "run": run, "form": form, "overview": overview, "plan": plan, "error": error,
    }, status=400 if error or (form.is_bound and not form.is_valid()) else 200)
