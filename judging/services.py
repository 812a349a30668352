"""Every state change of runs, sessions and verdicts: one keyword-only function each.

Views, websocket consumers and management commands call these and never write the ORM themselves.
Each docstring lists the function's side effects. Refusals are `blindjudge.errors` exceptions, which
callers turn into an HTTP status, a closed socket or a command error with the same message.
"""

import re
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from blindjudge.errors import Conflict, Invalid, NotFound
from content.bundle import BundleError, validate_bundle
from content.canonical import canonical_sha256, normalise_text, sha256_hex
from content.draws import Draws
from content.normalise import PatternError, compile_patterns
from content.rules import RulesError, parse_rules
from judging import audit, live
from judging.models import (
    Assignment,
    Builder,
    Copy,
    CopyTruth,
    Finding,
    FindingTruth,
    Item,
    PreregAmendment,
    Review,
    Reviewer,
    ReviewerDisplay,
    Run,
    Session,
    SessionKind,
    SessionState,
    TruthCorrection,
    Verdict,
)

PROTOCOL_VERSION = 1
MAX_REASON_CHARS = 10_000
MAX_TEXT_CHARS = 200_000

COPY_VERDICTS = ("pass", "fail")
FINDING_VERDICTS = ("real", "false_alarm")
KEEP = "keep"


MAX_GUEST_CAP = 100_000
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def checked_text(value: str, *, field: str, limit: int = MAX_TEXT_CHARS) -> str:
    """Text as it is stored: NFC with LF line endings. Refuses text over `limit` characters and
    NUL or lone surrogates, which no database here can store (a clear 400, never a 500)."""
    value = normalise_text(value or "")
    bad = _UNSTORABLE.search(value)
    if bad:
        what = "a NUL character" if bad.group() == "\x00" else "a lone surrogate"
        raise Invalid(f"{field}: contains {what} at character {bad.start()}")
    if len(value) > limit:
        raise Invalid(f"{field}: limited to {limit} characters")
    return value


def verdict_values(kind: str) -> tuple[str, ...]:
    return COPY_VERDICTS if kind == SessionKind.COPIES else FINDING_VERDICTS


# --- Runs --------------------------------------------------------------------------------------

def run_import(*, host, raw: bytes, actor: str) -> Run:
    """Validate a run bundle whole, then write it as one run, or write nothing at all.

    Side effects: creates the Run with its manifest and hashes, its Builders, Copies, Reviewers,
    Reviews (each marked sealed, failed with the reason, or absent) and Findings, in one
    transaction; appends a `run.imported` audit event.
    Raises Invalid whose message lists every problem in the bundle, one per line, each naming its
    place (`copies[3].builder: unknown builder "b9"`).
    """
    try:
        bundle = validate_bundle(
            raw,
            max_bundle_bytes=settings.BLINDJUDGE_MAX_BUNDLE_BYTES,
            max_copy_bytes=settings.BLINDJUDGE_MAX_COPY_BYTES,
        )
    except BundleError as error:
        raise Invalid(str(error)) from None
    data = bundle.data
    with transaction.atomic():
        run = Run.objects.create(
            host=host, name=data["run"]["name"], task=data["run"]["task"], format=data["format"],
            request_keys=bundle.request_keys, bundle_sha256=bundle.raw_sha256,
            manifest=bundle.manifest, manifest_sha256=bundle.manifest_sha256,
        )
        builders = {
            b["id"]: Builder(run=run, bundle_id=b["id"], model=b["model"], family=b["family"],
                             position=i)
            for i, b in enumerate(data["builders"])
        }
        Builder.objects.bulk_create(builders.values())
        copies = {
            c["id"]: Copy(
                run=run, bundle_id=c["id"], builder=builders[c["builder"]], format=c["format"],
                content=c["content"], content_sha256=sha256_hex(c["content"].encode("utf-8")),
                imported_truth=c["truth"], truth=c["truth"], defect=c.get("defect", ""),
                cluster=c.get("cluster", ""), position=i,
            )
            for i, c in enumerate(data["copies"])
        }
        Copy.objects.bulk_create(copies.values())
        reviewers = {
            r["id"]: Reviewer(run=run, bundle_id=r["id"], model=r["model"], family=r["family"],
                              position=i)
            for i, r in enumerate(data.get("reviewers", []))
        }
        Reviewer.objects.bulk_create(reviewers.values())
        Review.objects.bulk_create(
            Review(
                run=run, reviewer=reviewers[r["reviewer"]], copy=copies[r["copy"]],
                verdict=r["verdict"], reason=r.get("reason", ""),
                authorship_guess=r.get("authorship_guess", ""),
                request=r.get("request") or "", request_sha256=r.get("request_sha256") or "",
                seal=seal.outcome, seal_reason=seal.reason, position=i,
            )
            for i, (r, seal) in enumerate(zip(data.get("reviews", []), bundle.seals, strict=True))
        )
        findings = {
            f["id"]: Finding(
                run=run, bundle_id=f["id"], copy=copies[f["copy"]], text=f["text"],
                proposed_verdict=f["proposed_verdict"], imported_truth=f["truth"],
                truth=f["truth"], position=i,
            )
            for i, f in enumerate(data.get("findings", []))
        }
        Finding.objects.bulk_create(findings.values())
        raised = Finding.raised_by.through
        raised.objects.bulk_create(
            raised(finding=findings[f["id"]], reviewer=reviewers[reviewer_id])
            for f in data.get("findings", [])
            for reviewer_id in dict.fromkeys(f["raised_by"])
        )
        audit.record(
            "run.imported", actor=actor, run=run, bundle_sha256=bundle.raw_sha256,
            manifest_sha256=bundle.manifest_sha256, copies=len(copies), findings=len(findings),
        )
    return run


def truth_correct(*, run: Run, item: str, truth: str, note: str, actor: str) -> TruthCorrection:
    """Correct the truth label of one copy or finding (by bundle id); both versions are kept.

    Side effects: updates the current truth of the copy or finding, appends a dated
    TruthCorrection with the old and new labels and the note, and a `truth.corrected` audit event.
    Allowed at any time, the reveal included: the report scores under both versions.
    """
    note = checked_text(note, field="note").strip()
    if not note:
        raise Invalid("--note: say why the label is corrected")
    with transaction.atomic():
        target = Copy.objects.select_for_update().filter(run=run, bundle_id=item).first()
        choices = CopyTruth
        if target is None:
            target = Finding.objects.select_for_update().filter(run=run, bundle_id=item).first()
            choices = FindingTruth
        if target is None:
            raise NotFound(f'run {run.pk} has no copy or finding "{item}"')
        if truth not in choices.values:
            raise Invalid(
                f'truth "{truth}" is not one of {", ".join(choices.values)} '
                f"for a {'copy' if choices is CopyTruth else 'finding'}"
            )
        if target.truth == truth:
            raise Conflict(f'"{item}" is already labelled {truth}')
        correction = TruthCorrection.objects.create(
            run=run, copy=target if choices is CopyTruth else None,
            finding=target if choices is FindingTruth else None,
            old_truth=target.truth, new_truth=truth, note=note,
        )
        target.truth = truth
        target.save(update_fields=["truth"])
        audit.record(
            "truth.corrected", actor=actor, run=run, item=item, old=correction.old_truth, new=truth,
        )
    return correction


# --- Sessions ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class SessionCreated:
    session: Session
    guest_code: str | None


def _check_reviewer_names_allowed(run: Run):
    builder_names = set()
    for model, family in run.builders.values_list("model", "family"):
        builder_names |= {model.casefold(), family.casefold()}
    clashes = [
        r.bundle_id for r in run.reviewers.all()
        if r.model.casefold() in builder_names or r.family.casefold() in builder_names
    ]
    if clashes:
        raise Invalid(
            "reviewer display: model names would name a builder (reviewer "
            + ", ".join(f'"{c}"' for c in clashes)
            + " shares a model or family with a builder); use Reviewer A, B, … instead"
        )


def _check_rules(text: str, place: str) -> list[dict]:
    try:
        return parse_rules(text)
    except RulesError as error:
        raise Invalid("\n".join(f"{place}: {e}" for e in error.errors)) from None


def session_create(
    *, run: Run, kind: str, actor: str, rubric: str = "", preregistration: str = "",
    items_per_judge: int | None = None, guests_allowed: bool = False,
    guest_cap: int | None = None, reviewer_display: str = ReviewerDisplay.LETTERS,
    scorecards: bool = False, draw_seed: str = "",
) -> SessionCreated:
    """Create a draft session on a run, with one item per copy (or per finding).

    Side effects: creates the Session (random URL id, allocation seed drawn and stored) and its
    Items; issues the guest code when guests are allowed (see accounts.services.guests_configure);
    appends a `session.created` audit event.
    Refuses a findings session on a run without findings, items per judge outside 1..items, model
    names as reviewer labels when they would name a builder, malformed decision rules, a
    malformed draw seed.
    """
    from accounts.services import guests_configure  # accounts depends on judging, not the reverse

    if kind not in SessionKind.values:
        raise Invalid(f'kind "{kind}" is not one of {", ".join(SessionKind.values)}')
    if reviewer_display not in ReviewerDisplay.values:
        raise Invalid(
            f'reviewer display "{reviewer_display}" is not one of '
            f'{", ".join(ReviewerDisplay.values)}'
        )
    if draw_seed:
        try:
            if len(bytes.fromhex(draw_seed)) != 32:
                raise ValueError
        except ValueError:
            raise Invalid("draw seed: expected 64 hexadecimal characters") from None
    rubric = checked_text(rubric, field="rubric")
    preregistration = checked_text(preregistration, field="preregistration")
    if kind == SessionKind.FINDINGS:
        sources = [(f.copy, f, f.bundle_id) for f in run.findings.select_related("copy")]
        if not sources:
            raise Invalid(f"run {run.pk} has no findings; a findings session needs some")
    else:
        sources = [(c, None, c.bundle_id) for c in run.copies.all()]
    if items_per_judge is not None and not 1 <= items_per_judge <= len(sources):
        raise Invalid(
            f"items per judge: {items_per_judge} is outside 1..{len(sources)} "
            f"(the session has {len(sources)} items)"
        )
    check_guest_cap(guest_cap)
    if reviewer_display == ReviewerDisplay.NAMES:
        _check_reviewer_names_allowed(run)
    _check_rules(preregistration, "preregistration")

    draws = Draws(draw_seed)
    with transaction.atomic():
        session = Session.objects.create(
            run=run, url_id=Draws().symbols("url", "abcdefghijkmnpqrstuvwxyz23456789", 22),
            kind=kind, rubric=rubric, preregistration=preregistration,
            items_per_judge=items_per_judge, guest_cap=guest_cap,
            reviewer_display=reviewer_display, scorecards=scorecards, draw_seed=draw_seed,
            allocation_seed=draws.hex("allocation"),
        )
        Item.objects.bulk_create(
            Item(session=session, copy=copy, finding=finding, key=key)
            for copy, finding, key in sources
        )
        audit.record("session.created", actor=actor, session=session, kind=kind,
                     items=len(sources), items_per_judge=items_per_judge)
        guest_code = None
        if guests_allowed:
            guest_code = guests_configure(session=session, allow=True, actor=actor).guest_code
    return SessionCreated(session=session, guest_code=guest_code)


def check_guest_cap(cap: int | None):
    if cap is not None and not 1 <= cap <= MAX_GUEST_CAP:
        raise Invalid(f"guest cap: must be between 1 and {MAX_GUEST_CAP} (or no cap)")


def _locked_session(session: Session) -> Session:
    """Re-read the session row under a row lock (serialises state changes on PostgreSQL;
    SQLite's IMMEDIATE transactions already serialise every writer)."""
    return Session.objects.select_for_update().get(pk=session.pk)


def _require_state(session: Session, *states: str, doing: str):
    if session.state not in states:
        raise Conflict(f"cannot {doing}: session {session.pk} is {session.state}")


def redactions_accept(*, session: Session, patterns: list[str], actor: str) -> Session:
    """Accept content patterns to redact (literal, or `re:` + regex) on a draft session.

    Side effects: adds the patterns (deduplicated, in order) to the session's redaction list;
    appends a `redactions.accepted` audit event. Refused once the session has opened (the
    patterns are part of the frozen protocol) and for empty or invalid patterns.
    """
    patterns = [checked_text(p, field="pattern") for p in patterns]
    try:
        compile_patterns(patterns)
    except PatternError as error:
        raise Invalid(str(error)) from None
    with transaction.atomic():
        session = _locked_session(session)
        _require_state(session, SessionState.DRAFT, doing="change redactions")
        added = [p for p in dict.fromkeys(patterns) if p not in session.redaction_patterns]
        session.redaction_patterns = session.redaction_patterns + added
        session.save(update_fields=["redaction_patterns"])
        audit.record("redactions.accepted", actor=actor, session=session, patterns=added)
    return session


def redactions_withdraw(*, session: Session, patterns: list[str], actor: str) -> Session:
    """Withdraw accepted patterns from a draft session.

    Side effects: removes the patterns from the session's list; appends a `redactions.withdrawn`
    audit event. Refused once the session has opened, and for a pattern that was not accepted.
    """
    with transaction.atomic():
        session = _locked_session(session)
        _require_state(session, SessionState.DRAFT, doing="change redactions")
        unknown = [p for p in patterns if p not in session.redaction_patterns]
        if unknown:
            raise Invalid("not an accepted pattern: " + ", ".join(repr(p) for p in unknown))
        session.redaction_patterns = [p for p in session.redaction_patterns if p not in patterns]
        session.save(update_fields=["redaction_patterns"])
        audit.record("redactions.withdrawn", actor=actor, session=session, patterns=patterns)
    return session


def protocol_of(session: Session) -> dict:
    """The protocol as it freezes at opening.

    It holds what judges are asked and how (task, rubric, items by key and content hash, items per
    judge, redactions, reviewer display, preregistration and rules, allocation seed) and nothing
    of truth or builder identity, so it can be shown by hash to judges.
    """
    items = []
    for item in session.items.select_related("copy", "finding").order_by("key"):
        entry = {"key": item.key, "copy_sha256": item.copy.content_sha256}
        if item.finding_id:
            entry["finding_sha256"] = sha256_hex(item.finding.text.encode("utf-8"))
        items.append(entry)
    return {
        "blindjudge_protocol": PROTOCOL_VERSION,
        "kind": session.kind,
        "task": session.run.task,
        "rubric": session.rubric,
        "items": items,
        "items_per_judge": session.items_per_judge,
        "redaction_patterns": session.redaction_patterns,
        "reviewer_display": session.reviewer_display,
        "scorecards": session.scorecards,
        "preregistration": session.preregistration,
        "decision_rules": parse_rules(session.preregistration),
        "allocation_seed": session.allocation_seed,
    }


def session_open(*, session: Session, actor: str) -> Session:
    """Open a draft session: its protocol freezes.

    Side effects: validates the decision rules (unknown metrics or operators are refused here,
    never at report time); stores the protocol as canonical JSON with its SHA-256 and the time;
    moves the session to open; appends a `session.opened` audit event with the protocol hash.
    """
    with transaction.atomic():
        session = _locked_session(session)
        _require_state(session, SessionState.DRAFT, doing="open")
        rules = _check_rules(session.preregistration, "preregistration")
        protocol = protocol_of(session)
        session.protocol = protocol
        session.protocol_sha256 = canonical_sha256(protocol)
        session.decision_rules = rules
        session.state = SessionState.OPEN
        session.opened_at = timezone.now()
        session.save(update_fields=[
            "protocol", "protocol_sha256", "decision_rules", "state", "opened_at",
        ])
        audit.record("session.opened", actor=actor, session=session,
                     protocol_sha256=session.protocol_sha256)
        live.session_state_changed(session)
    return session


def prereg_amend(*, session: Session, text: str, actor: str) -> PreregAmendment:
    """Add a dated amendment to an opened session's preregistration (the frozen text stays).

    Side effects: stores the amendment with its hash and time, marked before or after the first
    verdict in the session; if it holds a `rules` block, those rules replace the rules in force
    (validated now); appends a `prereg.amended` audit event. Refused on drafts (edit the
    preregistration itself) and after the reveal.
    """
    text = checked_text(text, field="amendment").strip()
    if not text:
        raise Invalid("amendment: the text is empty")
    rules = _check_rules(text, "amendment")
    with transaction.atomic():
        session = _locked_session(session)
        _require_state(session, SessionState.OPEN, SessionState.CLOSED, doing="amend")
        before = not Verdict.objects.filter(assignment__judge__session=session).exists()
        amendment = PreregAmendment.objects.create(
            session=session, text=text, text_sha256=sha256_hex(text.encode("utf-8")),
            decision_rules=rules or None, before_first_verdict=before,
        )
        if rules:
            session.decision_rules = rules
            session.save(update_fields=["decision_rules"])
        audit.record("prereg.amended", actor=actor, session=session,
                     text_sha256=amendment.text_sha256, before_first_verdict=before,
                     replaces_rules=bool(rules))
    return amendment


def session_close(*, session: Session, actor: str) -> Session:
    """Close an open session: no new verdicts, drafts or locks until it is reopened.

    Side effects: moves the session to closed with the time; appends `session.closed`; tells the
    session's open sockets (after commit, like every state change below).
    """
    return _transition(session, SessionState.OPEN, SessionState.CLOSED, actor,
                       doing="close", action="session.closed", stamp="closed_at")


def session_reopen(*, session: Session, actor: str) -> Session:
    """Reopen a closed session (possible until the reveal).

    Side effects: moves the session back to open; appends `session.reopened`.
    """
    return _transition(session, SessionState.CLOSED, SessionState.OPEN, actor,
                       doing="reopen", action="session.reopened")


def session_reveal(*, session: Session, actor: str) -> Session:
    """Reveal a closed session. Irreversible.

    Side effects: moves the session to revealed with the time, which publishes the mapping and
    the commitment salts in the report and ends judging; appends `session.revealed`.
    """
    return _transition(session, SessionState.CLOSED, SessionState.REVEALED, actor,
                       doing="reveal", action="session.revealed", stamp="revealed_at")


def _transition(session, source, target, actor, *, doing, action, stamp=None):
    with transaction.atomic():
        session = _locked_session(session)
        _require_state(session, source, doing=doing)
        session.state = target
        fields = ["state"]
        if stamp:
            setattr(session, stamp, timezone.now())
            fields.append(stamp)
        session.save(update_fields=fields)
        audit.record(action, actor=actor, session=session)
        live.session_state_changed(session)
    return session


# --- Verdicts ----------------------------------------------------------------------------------

def _judge_for_update(judge):
    from accounts.models import Judge, JudgeStatus

    # The run comes along for the audit event of a lock; the session's protocol and the run's
    # manifest (an entry per item each) are needed by neither a verdict nor a lock.
    judge = (Judge.objects.select_for_update(of=("self",)).select_related("session__run")
             .defer("session__protocol", "session__run__manifest", "session__run__request_keys")
             .get(pk=judge.pk))
    if judge.status != JudgeStatus.ACTIVE:
        raise NotFound("no such judge")
    return judge


def verdict_record(*, judge, code: str, phase: int, value: str, reason: str = "",
                   seconds_spent: float = 0.0) -> Verdict:
    """Save a judge's verdict on one of their items in phase 1 or 2 (a draft until the lock).

    Idempotent: saving the same verdict again changes nothing and never adds a row. In phase 2,
    `keep` records the judge's own phase-1 verdict. `seconds_spent` is the judge's running total
    on the item in this phase; the stored time never decreases, so a replay cannot lower it.
    Side effects: creates or updates the Verdict row of (assignment, phase); a new row adds one
    to the judge's answered count of that phase; after commit, tells the judge's other tabs, and
    the host's dashboard when the item got its first verdict.
    Refuses: an unknown code (404, same as another judge's code), a closed session, a locked
    phase (409), phase 2 before the phase-1 lock (409), a value outside the session's kind.
    """
    if phase not in (1, 2):
        raise Invalid("phase: expected 1 or 2")
    reason = checked_text(reason, field="reason", limit=MAX_REASON_CHARS)
    try:
        seconds_spent = float(seconds_spent)
    except (TypeError, ValueError):
        raise Invalid("seconds spent: expected a number") from None
    if not 0 <= seconds_spent < 10**7:
        raise Invalid("seconds spent: out of range")
    with transaction.atomic():
        judge = _judge_for_update(judge)
        session = judge.session
        if session.state != SessionState.OPEN:
            raise Conflict(f"the session is {session.state}; verdicts are not accepted now")
        # order_by(): the default ordering would join and sort for a unique-key lookup.
        assignment = Assignment.objects.filter(judge=judge, code=code).order_by().first()
        if assignment is None:
            raise NotFound("no such item")
        allowed = verdict_values(session.kind)
        kept = False
        if phase == 1:
            if judge.phase1_locked_at:
                raise Conflict("phase 1 is locked; its verdicts never change")
        else:
            if not judge.phase1_locked_at:
                raise Conflict("phase 2 opens after you lock phase 1")
            if judge.phase2_locked_at:
                raise Conflict("phase 2 is locked; its verdicts never change")
            if value == KEEP:
                value = Verdict.objects.get(assignment=assignment, phase=1).value
                kept = True
        if value not in allowed:
            raise Invalid(f'verdict "{value}" is not one of {", ".join(allowed)}')
        verdict = Verdict.objects.filter(assignment=assignment, phase=phase).order_by().first()
        if verdict is None:
            verdict = Verdict.objects.create(
                assignment=assignment, phase=phase, value=value, kept=kept, reason=reason,
                seconds_spent=seconds_spent,
            )
            answered = f"phase{phase}_answered"
            type(judge).objects.filter(pk=judge.pk).update(**{answered: F(answered) + 1})
            live.verdict_saved(judge, code=code, phase=phase, new=True)
        elif (verdict.value, verdict.kept, verdict.reason) != (value, kept, reason) or \
                seconds_spent > verdict.seconds_spent:
            verdict.value, verdict.kept, verdict.reason = value, kept, reason
            verdict.seconds_spent = max(verdict.seconds_spent, seconds_spent)
            verdict.save(update_fields=["value", "kept", "reason", "seconds_spent", "updated_at"])
            live.verdict_saved(judge, code=code, phase=phase, new=False)
    return verdict


def phase_lock(*, judge, phase: int):
    """Lock a judge's verdicts of one phase, after every item has one. Never undone.

    The judge row is locked first (`select_for_update` on PostgreSQL; SQLite's IMMEDIATE
    transaction serialises writers) so two tabs locking at once give exactly one lock: the second
    sees the first's lock and is refused with a 409, never a database error.
    Side effects: marks the phase's verdicts locked (the database trigger then refuses any change
    to them), stamps the judge's lock time, appends a `phase.locked` audit event; after commit,
    tells the judge's other tabs and the host's dashboard.
    """
    if phase not in (1, 2):
        raise Invalid("phase: expected 1 or 2")
    with transaction.atomic():
        judge = _judge_for_update(judge)
        session = judge.session
        if session.state != SessionState.OPEN:
            raise Conflict(f"the session is {session.state}; locking is not possible now")
        stamp = "phase1_locked_at" if phase == 1 else "phase2_locked_at"
        if getattr(judge, stamp):
            raise Conflict(f"phase {phase} is already locked")
        if phase == 2 and not judge.phase1_locked_at:
            raise Conflict("phase 2 opens after you lock phase 1")
        assignments = judge.assignments.count()
        answered = Verdict.objects.filter(assignment__judge=judge, phase=phase).count()
        if answered < assignments:
            raise Conflict(
                f"{assignments - answered} of {assignments} items have no phase-{phase} verdict yet"
            )
        Verdict.objects.filter(assignment__judge=judge, phase=phase, locked=False).update(
            locked=True
        )
        setattr(judge, stamp, timezone.now())
        judge.save(update_fields=[stamp])
        audit.record("phase.locked", actor=f"judge:{judge.pseudonym}", session=session,
                     judge=judge.pseudonym, phase=phase)
        live.judge_locked(judge, phase=phase)
    return judge


# --- Draft editing (host pages) ----------------------------------------------------------------

UNCHANGED = object()


def session_update_draft(
    *, session: Session, actor: str, rubric=UNCHANGED, preregistration=UNCHANGED,
    items_per_judge=UNCHANGED, reviewer_display=UNCHANGED, scorecards=UNCHANGED,
) -> Session:
    """Change a draft session's rubric, preregistration, items per judge, reviewer display or
    scorecards; a field left UNCHANGED keeps its value.

    Validation is session_create's: text normalised and bounded, items per judge within 1..items
    (None means all), model names as reviewer labels refused where they would name a builder,
    malformed decision rules refused. Everything is checked before anything is written.
    Side effects: updates the given fields of the session; appends a `session.updated` audit
    event naming the changed fields (never their text). Refused once the session has opened (the
    protocol is frozen; amend the preregistration instead).
    """
    changes = {}
    if rubric is not UNCHANGED:
        changes["rubric"] = checked_text(rubric, field="rubric")
    if preregistration is not UNCHANGED:
        changes["preregistration"] = checked_text(preregistration, field="preregistration")
        _check_rules(changes["preregistration"], "preregistration")
    if reviewer_display is not UNCHANGED:
        if reviewer_display not in ReviewerDisplay.values:
            raise Invalid(
                f'reviewer display "{reviewer_display}" is not one of '
                f'{", ".join(ReviewerDisplay.values)}'
            )
        if reviewer_display == ReviewerDisplay.NAMES:
            _check_reviewer_names_allowed(session.run)
        changes["reviewer_display"] = reviewer_display
    if scorecards is not UNCHANGED:
        changes["scorecards"] = bool(scorecards)
    with transaction.atomic():
        session = _locked_session(session)
        _require_state(session, SessionState.DRAFT, doing="edit the draft")
        if items_per_judge is not UNCHANGED:
            items = session.items.count()
            if items_per_judge is not None and (
                    isinstance(items_per_judge, bool) or not isinstance(items_per_judge, int)):
                raise Invalid("items per judge: expected a whole number (or empty for all)")
            if items_per_judge is not None and not 1 <= items_per_judge <= items:
                raise Invalid(
                    f"items per judge: {items_per_judge} is outside 1..{items} "
                    f"(the session has {items} items)"
                )
            changes["items_per_judge"] = items_per_judge
        changed = [name for name, value in changes.items() if getattr(session, name) != value]
        for name in changed:
            setattr(session, name, changes[name])
        if changed:
            session.save(update_fields=changed)
            audit.record("session.updated", actor=actor, session=session, fields=changed)
    return session


# --- Live sockets (who is connected now) ---------------------------------------------------------

def live_socket_open(*, judge, channel_name: str):
    """A judge's websocket opened. Refused (NotFound) for a judge no longer active, so a socket
    never outlives its judge's removal even if the removal's event was missed.

    Side effects: records the socket with the time (and drops rows a killed process left behind
    more than a day ago); after commit, the host's dashboard gets the judge's row.
    """
    from datetime import timedelta

    from judging.models import LiveSocket

    with transaction.atomic():
        judge = _judge_for_update(judge)
        now = timezone.now()
        LiveSocket.objects.filter(seen_at__lt=now - timedelta(days=1)).delete()
        LiveSocket.objects.update_or_create(channel_name=channel_name,
                                            defaults={"judge": judge, "seen_at": now})
        live.judge_changed(judge)
    return judge


def live_socket_seen(*, judge, channel_name: str) -> bool:
    """The client of a judge's socket pinged: it still counts as connected. Returns False (and
    forgets the socket) when the judge is no longer active, so the caller closes it.

    Side effects: refreshes the socket's time; after commit, the host's dashboard gets the row
    when the socket had gone stale (its process restarted, or the client slept).
    """
    from accounts.models import JudgeStatus
    from judging.models import LiveSocket

    now = timezone.now()
    with transaction.atomic():
        if not type(judge).objects.filter(pk=judge.pk, status=JudgeStatus.ACTIVE).exists():
            LiveSocket.objects.filter(channel_name=channel_name).delete()
            return False
        socket = LiveSocket.objects.filter(channel_name=channel_name).first()
        if socket is None or (now - socket.seen_at).total_seconds() > live.STALE_SECONDS:
            LiveSocket.objects.update_or_create(channel_name=channel_name,
                                                defaults={"judge_id": judge.pk, "seen_at": now})
            live.judge_changed(judge)
        else:
            LiveSocket.objects.filter(pk=socket.pk).update(seen_at=now)
    return True


def live_socket_close(*, judge, channel_name: str):
    """A judge's websocket closed. Side effects: forgets the socket; after commit, the host's
    dashboard gets the judge's row."""
    from judging.models import LiveSocket

    with transaction.atomic():
        if LiveSocket.objects.filter(channel_name=channel_name).delete()[0]:
            live.judge_changed(judge)
