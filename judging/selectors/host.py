"""What a host reads: only their own runs and sessions; another host's id is the same NotFound as
an id that does not exist.
"""


from django.core.paginator import Page, Paginator
from django.db.models import Count, F, IntegerField, OuterRef, Prefetch, Q, Subquery, Value
from django.db.models.functions import Coalesce, Length
from django.utils import timezone

from accounts.enums import AdmittedAs, CredentialKind, JudgeStatus
from accounts.models import Credential, Invitation, Judge
from blindjudge.errors import NotFound
from content.truth import DEFECTIVE, GOOD
from judging.blinding import blinding_check  # noqa: F401 - the host's faces read it from here
from judging.enums import CopyTruth, ReviewVerdict, SealOutcome, SessionKind, SessionState
from judging.models import OPEN_LEASE_SECONDS, Copy, Finding, Run, Session, SessionRender, Verdict
from judging.selectors.live import last_activity
from judging.services.adjudication import matrix_sessions

# The frozen protocol and the run's manifest are JSON documents with an entry per item (hundreds
# of KB at 1,000 items) that almost no page reads; decoding them on every request cost more than
# the page itself. Deferred, they load on first access (one query) where they are needed.
HEAVY_SESSION_FIELDS = ("protocol", "run__manifest", "run__request_keys")


def session_for_host(*, host, session_id) -> Session:
    try:
        return (Session.objects.select_related("run").defer(*HEAVY_SESSION_FIELDS)
                .get(pk=int(session_id), run__host=host))
    except (Session.DoesNotExist, ValueError, TypeError):
        raise NotFound(f"no session {session_id}") from None


def run_for_host(*, host, run_id) -> Run:
    try:
        return Run.objects.get(pk=int(run_id), host=host)
    except (Run.DoesNotExist, ValueError, TypeError):
        raise NotFound(f"no run {run_id}") from None


def session_instructions_html(session: Session) -> str:
    """The instructions as judges are shown them: rendered when the session opened (empty before)."""
    return (SessionRender.objects.filter(session=session)
            .values_list("instructions_html", flat=True).first()) or ""


def opening_progress(session: Session) -> dict:
    """A draft's opening as the host's page shows it: `running` (a claim refreshed within its
    lease), `rendered` of `to_render` texts stored, `stalled` (a claim whose lease ran out: its
    process died), `failure` (why the last opening from the page stopped), and `state`."""
    state = session.state  # as the request read it (the page's own, reloaded when it ends)
    row = (SessionRender.objects.filter(session_id=session.pk)
           .values("opener", "opener_seen_at", "rendered", "to_render", "failure").first())
    progress = {"state": state, "running": False, "stalled": False, "rendered": 0,
                "to_render": 0, "failure": ""}
    if row is None or state != SessionState.DRAFT:
        return progress
    claimed = bool(row["opener"]) and row["opener_seen_at"] is not None
    fresh = claimed and (timezone.now() - row["opener_seen_at"]).total_seconds() < OPEN_LEASE_SECONDS
    progress.update(running=fresh, stalled=claimed and not fresh, rendered=row["rendered"],
                    to_render=row["to_render"], failure=row["failure"])
    return progress


def items_per_judge(session: Session) -> int:
    """How many items each judge of the session has: the session's items per judge, or all of
    them (the allocation at joining, judging.services.admission, gives every judge exactly that)."""
    items = session.items.count()
    return min(session.items_per_judge or items, items)


def _count_per_run(model):
    """The number of `model` rows of the outer run, as a correlated subquery (one index range
    scan each, on `run_id`)."""
    counted = (model.objects.filter(run=OuterRef("pk")).order_by().values("run")
               .annotate(n=Count("pk")).values("n"))
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def runs_of_host(host):
    """The host's runs, newest first, with their copy and finding counts and their sessions.

    Each count is its own subquery. `Count(..., distinct=True)` over the joins of copies and
    findings built copies x findings rows per run, and SQLite grouped them by every column of the
    run, its manifest (megabytes at the bundle limit) included: a run of 2,000 copies and 2,000
    findings took the page 140 s (issue 25 low 10). Two queries whatever the number of runs: the
    runs with their counts, and their sessions. Only the columns the page lists are read, never a
    run's manifest or bundle object, nor a session's texts or protocol."""
    sessions = Session.objects.only("pk", "run_id", "kind", "state").order_by("pk")
    return (Run.objects.filter(host=host).only("pk", "host_id", "name", "imported_at")
            .order_by("-imported_at", "-pk")
            .annotate(copy_count=_count_per_run(Copy), finding_count=_count_per_run(Finding))
            .prefetch_related(Prefetch("sessions", queryset=sessions)))


REVIEWS_PER_PAGE = 500
# The run page's tasks, copies and findings: a page of each (a task's statement is in its row).
RUN_ROWS_PER_PAGE = 100
RUN_LISTS = ("tasks", "copies", "findings")


def run_overview(run: Run, pages: dict | None = None) -> dict:
    """Everything a run's page shows: builders, reviewers, the reviews counted per reviewer and
    condition (`run_review_counts`; listed a page at a time by `run_reviews_page`), the truth
    corrections and the sessions on the run; and of its tasks, copies (their size, never their
    content) and findings, the page `pages[name]` names (RUN_ROWS_PER_PAGE a page, as
    `run_reviews_page` reads a number), the copies also counted by truth."""
    pages = pages or {}
    # Copies can be megabytes each: count their characters in the database, load none.
    copies = (run.copies.select_related("builder", "task").defer("content", "task__statement")
              .annotate(characters=Length("content")).order_by("position", "pk"))
    findings = (run.findings.select_related("copy").prefetch_related("findingraise_set__reviewer")
                .order_by("position", "pk"))
    # (A query that groups drops the model's ordering: a page needs one.)
    tasks = run.tasks.annotate(copy_count=Count("copies")).order_by("position", "pk")
    listed = {name: Paginator(rows, RUN_ROWS_PER_PAGE).get_page(pages.get(name))
              for name, rows in (("tasks", tasks), ("copies", copies), ("findings", findings))}
    return {
        "builders": list(run.builders.all()),
        **listed,
        "copy_truths": run_copy_truths(run),
        "reviewers": list(run.reviewers.all()),
        "review_counts": run_review_counts(run),
        "corrections": list(run.truth_corrections.select_related("copy", "finding")),
        "sessions": list(run.sessions.annotate(judge_count=Count("judges")).order_by("pk")),
    }


def run_copy_truths(run: Run) -> dict:
    """{"by_truth": [(truth, copies)] in CopyTruth's order, those counted; "corrected": how many
    copies' truth differs from the imported one}, counted in the database."""
    counted = run.copies.aggregate(
        **{truth: Count("pk", filter=Q(truth=truth)) for truth in CopyTruth.values},
        corrected=Count("pk", filter=~Q(truth=F("imported_truth"))))
    return {"by_truth": [(truth, counted[truth]) for truth in CopyTruth.values if counted[truth]],
            "corrected": counted["corrected"]}


def run_review_counts(run: Run) -> list[dict]:
    """Per reviewer (in the bundle's order) and condition: the reviews, their verdicts and their
    seals' outcomes, counted in the database (a run can hold tens of thousands of reviews, each
    with its request)."""
    def counted(field, value):
        return Count("pk", filter=Q(**{field: value}))

    return list(
        run.reviews.order_by("reviewer__position", "reviewer_id", "condition")
        .values("reviewer__bundle_id", "condition")
        .annotate(reviews=Count("pk"), passed=counted("verdict", ReviewVerdict.PASS),
                  failed=counted("verdict", ReviewVerdict.FAIL),
                  abstained=counted("verdict", ReviewVerdict.ABSTAIN),
                  sealed=counted("seal", SealOutcome.SEALED),
                  absent=counted("seal", SealOutcome.ABSENT),
                  seal_failed=counted("seal", SealOutcome.FAILED),
                  verdict_in_content=counted("seal", SealOutcome.VERDICT_IN_CONTENT)))


def run_reviews_page(run: Run, number) -> Page:
    """One page of the run's reviews in import order, REVIEWS_PER_PAGE a page; `number` as the
    query string gives it (a page out of range is the nearest, anything else the first). Their
    requests, which the page does not show, are not loaded."""
    reviews = (run.reviews.select_related("reviewer", "copy")
               .only("pk", "run_id", "position", "condition", "verdict", "reason",
                     "authorship_guess", "seal", "seal_reason", "content_verdict",
                     "content_verdict_pattern", "reviewer__bundle_id", "copy__bundle_id")
               .order_by("position", "pk"))
    return Paginator(reviews, REVIEWS_PER_PAGE).get_page(number)


def run_item(run: Run, kind: str, position: int):
    """The run's copy or finding at a position (as the run's page numbers them)."""
    item = (run.copies if kind == "copy" else run.findings).filter(position=position).first()
    if item is None:
        raise NotFound(f"run {run.pk} has no {kind} {position}")
    return item


def truth_history(run: Run, kind: str, item):
    return run.truth_corrections.filter(**{kind: item})


def session_lock_counts(session: Session) -> dict:
    """Of the session's active judges: how many, how many never locked phase 1, and how many
    locked phase 1 but not phase 2."""
    return session.judges.filter(status=JudgeStatus.ACTIVE).aggregate(
        active=Count("id"),
        never_locked=Count("id", filter=Q(phase1_locked_at__isnull=True)),
        phase2_unlocked=Count("id", filter=Q(phase1_locked_at__isnull=False,
                                             phase2_locked_at__isnull=True)),
    )


# Details the log keeps and the host's page never shows: the seed that draws the screening
# controls (judging.services.sessions, screening.drawn) is published by the report at the reveal;
# shown before, a judge who saw the page could tell which items screen.
HIDDEN_DETAILS = frozenset({"seed"})


def session_events(session: Session, limit: int = 100) -> list[dict]:
    """The session's audit log, newest first, each event's details as one line (HIDDEN_DETAILS
    left out)."""
    return [
        {"event": e, "details": "; ".join(f"{k}={v}" for k, v in sorted(e.details.items())
                                          if k not in HIDDEN_DETAILS)}
        for e in session.auditevent_set.order_by("-at", "-pk")[:limit]
    ]


def item_truth_counts(session: Session) -> dict:
    """The session's items by truth class, and how many each judge gets (for the planner)."""
    defective = good = unknown = 0
    for item in session.items.select_related("copy", "finding"):
        truth = item.finding.truth if item.finding_id else item.copy.truth
        if truth in DEFECTIVE:
            defective += 1
        elif truth in GOOD:
            good += 1
        else:
            unknown += 1
    return {"defective": defective, "good": good, "unknown": unknown,
            "per_judge": session.items_per_judge or defective + good + unknown}


def invitation_rows(session: Session) -> list[dict]:
    """Each invitation with where it stands: joined (as whom), waiting for GitHub sign-in, or its
    join link's state. Never the link itself: it exists in clear only when it is issued."""
    join_links = {
        c.invitation_id: c for c in Credential.objects.filter(
            session=session, kind=CredentialKind.JOIN).order_by("pk")
    }
    now = timezone.now()
    rows = []
    last_active = dict(Judge.objects.filter(session=session, invitation__isnull=False)
                       .annotate(at=last_activity()).values_list("pk", "at"))
    for invitation in session.invitations.select_related("judge").order_by("pk"):
        credential = join_links.get(invitation.pk)
        if invitation.judge_id:
            status_text = f"joined as {invitation.judge.pseudonym}"
        elif invitation.github_login:
            status_text = "waiting for GitHub sign-in"
        elif credential is None:
            status_text = "no link yet"  # a list's links are issued when their CSV is downloaded
        elif credential.revoked_at:
            status_text = "link revoked"
        elif credential.used_at:
            status_text = "link used"
        elif credential.expires_at and credential.expires_at <= now:
            status_text = "link expired"
        else:
            status_text = "link not used yet"
        rows.append({
            "invitation": invitation, "status": status_text,
            "expires_at": credential.expires_at if credential else None,
            "by": "GitHub login" if invitation.github_login else "join link",
            "joined": invitation.judge_id is not None,
            "last_active_at": last_active.get(invitation.judge_id),
            # A lost link is reissued while the invitee has not joined (after, their resume link).
            "can_reissue": (not invitation.judge_id and not invitation.github_login
                            and session.state != SessionState.REVEALED),
        })
    return rows


def invitation_of_session(session: Session, invitation_id: int) -> Invitation:
    invitation = session.invitations.filter(pk=invitation_id).first()
    if invitation is None:
        raise NotFound(f"no invitation {invitation_id} in this session")
    return invitation


def guest_overview(session: Session) -> dict:
    """Whether a guest code is active now, and how many guests joined."""
    return {
        "has_code": Credential.objects.filter(session=session, kind=CredentialKind.GUEST,
                                              revoked_at__isnull=True).exists(),
        "guests": session.judges.filter(admitted_as=AdmittedAs.GUEST).count(),
    }


def judge_of_session(session: Session, number: int):
    judge = session.judges.filter(number=number).first()
    if judge is None:
        raise NotFound(f"session {session.pk} has no judge {number}")
    return judge


def judge_held_by_host(session: Session, user):
    """The host's own judge in their session, if they joined it."""
    return session.judges.filter(user=user).first()


def copy_for_preview(session: Session, bundle_id: str | None) -> Copy | None:
    """The session's copy of that bundle id, else its run's first copy (None: a run without
    copies): the one the blinding page previews with the accepted redactions."""
    copies = session.run.copies.order_by("position")
    return (copies.filter(bundle_id=bundle_id).first() if bundle_id else None) or copies.first()


def item_count(session: Session) -> int:
    return session.items.count()


def amendments_of(session: Session) -> list:
    """The preregistration's amendments, oldest first (the model's order)."""
    return list(session.amendments.all())


def run_sizes(run: Run) -> tuple[int, int]:
    """(copies, findings) of the run."""
    return run.copies.count(), run.findings.count()


def adjudicated_on_run(run: Run) -> dict:
    """("finding" | "copy", pk) -> what the run's revealed adjudications decided, in words beside
    the truth ("adjudicated real (2026-12-05, J01, session 7)", or "cannot tell"): answers of an
    adjudicator who locked, shown once the host revealed the adjudication, as any verdict is."""
    rows = (Verdict.objects.filter(
        assignment__judge__session__run=run, assignment__judge__status=JudgeStatus.ACTIVE,
        assignment__judge__session__kind=SessionKind.ADJUDICATION,
        assignment__judge__session__state=SessionState.REVEALED, phase=1, locked=True)
        .order_by("assignment__judge__session_id")
        .values_list("assignment__item__finding_id", "assignment__item__copy_id", "value",
                     "assignment__judge__phase1_locked_at", "assignment__judge__pseudonym",
                     "assignment__judge__session_id"))
    decided = {}
    for finding, copy, value, locked_at, pseudonym, session_id in rows:
        said = "cannot tell" if value == "cannot_tell" else \
            f"adjudicated {value.replace('_', ' ')}"
        decided[("finding", finding) if finding else ("copy", copy)] = (
            f"{said} ({locked_at.date().isoformat()}, {pseudonym}, session {session_id})")
    return decided


def adjudication_partners(session: Session) -> list[Session]:
    """An adjudication's partners: the copies and findings sessions whose reports use it; a copies
    or findings session's: the adjudications of its items. None for other kinds."""
    if session.kind == SessionKind.ADJUDICATION:
        kinds = (SessionKind.COPIES, SessionKind.FINDINGS)
    elif session.kind in (SessionKind.COPIES, SessionKind.FINDINGS):
        kinds = (SessionKind.ADJUDICATION,)
    else:
        return []
    return list(matrix_sessions(session).filter(kind__in=kinds).order_by("pk")
                .only("pk", "kind", "state"))
