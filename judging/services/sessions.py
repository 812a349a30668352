"""Sessions: creating and editing the draft, redactions, guest settings, opening (the protocol
freezes), amendments, and the states draft -> open <-> closed -> revealed.
"""

import json
import re
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.enums import AdmittedAs, CredentialKind
from accounts.models import Credential
from blindjudge.errors import Conflict, Invalid
from content.blinding import decision_key
from content.canonical import CURRENT, FORM_KEY, canonical_sha256, form_of, sha256_hex
from content.draws import Draws, new_guest_code
from content.normalise import PatternError, compile_patterns
from content.rules import (
    CONTROL_TRUTHS,
    DEFAULT_ALPHA,
    DEFAULT_PRIMARY,
    RulesBlock,
    RulesError,
    RunBuilder,
    RunContext,
    RunReviewer,
    has_rules_block,
    parse_block,
    screening_share,
)
from judging import audit, live, opening, renders
from judging.blinding import blinding_check, undecided_refusal
from judging.enums import ReviewerDisplay, SessionKind, SessionState
from judging.models import (
    DEFAULT_VERDICT_MIN_SHOWN_MS,
    MAX_VERDICT_MIN_SHOWN_MS,
    OPEN_LEASE_SECONDS,
    CopyRender,
    FindingRender,
    Item,
    PreregAmendment,
    Review,
    Run,
    Session,
    SessionRender,
    Task,
    TaskRender,
    Verdict,
)
from judging.services.adjudication import (
    NO_GUESTS,
    adjudication_sources,
    refuse_adjudicated_elsewhere,
)
from judging.services.admission import issue_credential
from judging.services.checks import check_guest_cap, checked_text
from judging.services.judges import judge_remove
from judging.services.pairs import pairs_sources
from judging.services.reasons import reasons_sources

DEFAULT_MINUTES_PER_ITEM = 3  # Session.minutes_per_item's default: not named in the protocol
MAX_MINUTES_PER_ITEM = 240
PROTOCOL_VERSION = 2  # 2: a list of tasks, each item naming its task (1: one `task` string)
DEFAULT_GUEST_CAP = object()  # session_create: the cap is settings.BLINDJUDGE_DEFAULT_GUEST_CAP


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


def _rules_context(run: Run) -> RunContext:
    """What decision rules are checked against: the run's reviewers with the conditions each has
    reviews under, its builders, its default condition (content.rules.RunContext)."""
    conditions: dict[int, set[str]] = {}
    for reviewer_pk, condition in (Review.objects.filter(run=run).order_by()
                                   .values_list("reviewer_id", "condition").distinct()):
        conditions.setdefault(reviewer_pk, set()).add(condition)
    return RunContext(
        default_condition=run.default_condition,
        reviewers=tuple(RunReviewer(r.bundle_id, r.model, r.family,
                                    tuple(sorted(conditions.get(r.pk, ()))))
                        for r in run.reviewers.all()),
        builders=tuple(RunBuilder(b.bundle_id, b.model, b.family) for b in run.builders.all()),
    )


def _controls_of(run: Run, kind: str) -> dict:
    """The session's controls by truth ({"seeded_defect": n, "known_good": n}): a copies session
    judges every copy of the run, so its controls are the run's; no other kind judges copies
    against a control's truth, so it has none."""
    if kind != SessionKind.COPIES:
        return {}
    counts = dict.fromkeys(CONTROL_TRUTHS, 0)
    for truth in run.copies.filter(truth__in=CONTROL_TRUTHS).values_list("truth", flat=True):
        counts[truth] += 1
    return counts


def _check_rules(text: str, place: str, run: Run, *, task_flags: bool, kind: str) -> RulesBlock:
    """The text's rules block, checked against the run; Invalid naming each problem by place.
    `task_flags`: whether the session collects judges' task flags; a rule that excludes flagged
    tasks is refused where it does not, here, when it is written, never at report time. `kind`:
    the session's; a rule excluding judges by their scores on the controls is refused where the
    session has no control of the class it reads (a findings session has none), likewise."""
    try:
        if not has_rules_block(text):
            return parse_block(text)
        return parse_block(text, _rules_context(run), task_flags=bool(task_flags),
                           controls=_controls_of(run, kind), kind=str(kind))
    except RulesError as error:
        raise Invalid("\n".join(f"{place}: {e}" for e in error.errors)) from None


# The draft's settings, each checked in one place for session_create and session_update_draft.

def _checked_preregistration(text: str, run: Run, *, task_flags: bool, kind: str) -> str:
    """Text as stored, with its block of decision rules (if any) well formed and naming only
    reviewers, conditions and builders the run has (and excluding flagged tasks only where the
    session collects task flags, judges by the controls only where it has them)."""
    text = checked_text(text, field="preregistration")
    _check_rules(text, "preregistration", run, task_flags=task_flags, kind=kind)
    return text


def _checked_reviewer_display(value: str, run: Run) -> str:
    if value not in ReviewerDisplay.values:
        raise Invalid(f'reviewer display "{value}" is not one of {", ".join(ReviewerDisplay.values)}')
    if value == ReviewerDisplay.NAMES:
        _check_reviewer_names_allowed(run)
    return value


def _checked_items_per_judge(value, items: int) -> int | None:
    """None (every judge gets every item) or a whole number in 1..items."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid("items per judge: expected a whole number (or empty for all)")
    if not 1 <= value <= items:
        raise Invalid(f"items per judge: {value} is outside 1..{items} (the session has {items} items)")
    return value


def _checked_minutes_per_item(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid("minutes per item: expected a whole number of minutes")
    if not 1 <= value <= MAX_MINUTES_PER_ITEM:
        raise Invalid(f"minutes per item: {value} is outside 1..{MAX_MINUTES_PER_ITEM}")
    return value


def _checked_verdict_min_shown_ms(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid("shortest time shown before a verdict: expected a whole number of milliseconds")
    if not 0 <= value <= MAX_VERDICT_MIN_SHOWN_MS:
        raise Invalid(f"shortest time shown before a verdict: {value} ms is outside "
                      f"0..{MAX_VERDICT_MIN_SHOWN_MS}")
    return value


def _checked_by_task(value, kind: str, run: Run) -> bool:
    if not value:
        return False
    if kind != SessionKind.COPIES:
        raise Invalid("by task: only a copies session can give judges every copy of a task; "
                      "a findings session allocates findings one by one")
    tasks = run.tasks.count()
    if tasks < 2:
        raise Invalid(f"by task: run {run.pk} has {tasks} task, so every judge would get every "
                      f"copy; leave by task off (items per judge then allocates copies)")
    return True


ADJUDICATION_ALONE = ("an adjudication is judged alone, in one phase, by one adjudicator who answers "
                      "every item: {what} does not apply to it")


def _check_adjudication(*, guests_allowed=False, items_per_judge=None, by_task=False,
                        scorecards=False, mark_disagreement=False, preregistration="") -> None:
    """Invalid for a setting an adjudication cannot have: guests (its one adjudicator is invited,
    so that who they are can be checked), items per judge (the adjudicator answers every item),
    by task, scorecards (nobody is scored against truth the adjudication itself decides),
    marked disagreements (there is no phase 2), decision rules (its answers are truth, not
    scores)."""
    if guests_allowed:
        raise Invalid(NO_GUESTS)
    for value, what in ((items_per_judge, "items per judge"), (by_task, "by task"),
                        (scorecards, "scorecards"), (mark_disagreement, "marking disagreements")):
        if value:
            raise Invalid(ADJUDICATION_ALONE.format(what=what))
    if has_rules_block(preregistration or ""):
        raise Invalid("preregistration: an adjudication has no decision rules (its answers are "
                      "truth, not scores); write the preregistration as text")


def _check_reasons(*, guests_allowed=False, by_task=False, task_flags=False, scorecards=False,
                   mark_disagreement=False) -> None:
    """Invalid for a setting a reasons session cannot have: guests (its judges see model verdicts
    in phase 1, so who they are must be checkable against the run's other sessions), by task and
    task flags (its items are reviews, not copies of tasks), scorecards and marked
    disagreements (phase 2 shows the copy's truth, not the reviewers' rows)."""
    if guests_allowed:
        raise Invalid("a reasons session has no guests: its judges read model verdicts in phase "
                      "1, so who they are must be checkable against the run's other sessions")
    for value, what in ((by_task, "by task"), (task_flags, "task flags"),
                        (scorecards, "scorecards"), (mark_disagreement, "marking disagreements")):
        if value:
            raise Invalid(f"a reasons session audits reviews, one at a time: {what} does not "
                          "apply to it")


def _check_pairs(*, by_task=False, task_flags=False, scorecards=False,
                 mark_disagreement=False) -> None:
    """Invalid for a setting a pairs session does not have (yet): by task (a pair is already one
    task's), task flags, scorecards and marked disagreements (they speak of one copy's verdict,
    and a pair's answer is a preference)."""
    for value, what in ((by_task, "by task"), (task_flags, "task flags"),
                        (scorecards, "scorecards"), (mark_disagreement, "marking disagreements")):
        if value:
            raise Invalid(f"a pairs session asks which of two copies is better: {what} does not "
                          "apply to it")


def _checked_per_stratum(value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise Invalid("per stratum: expected a whole number of reviews, 1 or more (or none for "
                      "every review)")
    return value


def _checked_task_flags(value, kind: str) -> bool:
    if not value:
        return False
    if kind != SessionKind.COPIES:
        raise Invalid("task flags: only a copies session collects judges' task flags (a task judged "
                      "invalid as posed); a findings session judges findings, not tasks")
    return True


DRAW_SEED_SHOWN = ("{field}: holds the session's draw seed. Whoever knows it and the bundle's ids "
                   "can tell each code's builder before the reveal, so it is kept out of anything "
                   "judges (or the public, before the reveal) can read: take it out.")
_NOT_HEX = re.compile(r"[^0-9a-f]")


def _refuse_draw_seed(draw_seed: str, **texts) -> None:
    """Invalid where a text judges can read (rubric, instructions, preregistration, amendment)
    holds the draw seed: it derives every judge's order seed and salt (content.draws), so it
    tells each code's builder. Matched whatever its case and whatever separates its digits
    (spaces, line breaks, colons, dashes)."""
    seed = draw_seed.strip().lower()
    if not seed:
        return
    for field, text in texts.items():
        if text and seed in _NOT_HEX.sub("", text.lower()):
            raise Invalid(DRAW_SEED_SHOWN.format(field=field))


def session_create(
    *, run: Run, kind: str, actor: str, rubric: str = "", preregistration: str = "",
    items_per_judge: int | None = None, guests_allowed: bool = False,
    guest_cap=DEFAULT_GUEST_CAP, reviewer_display: str = ReviewerDisplay.LETTERS,
    scorecards: bool = False, draw_seed: str = "", by_task: bool = False,
    advance_on_key: bool = True, mark_disagreement: bool = False, instructions: str = "",
    minutes_per_item: int = DEFAULT_MINUTES_PER_ITEM,
    verdict_min_shown_ms: int = DEFAULT_VERDICT_MIN_SHOWN_MS, task_flags: bool = False,
    unknown_copies: bool = False, adjudicate_findings=(), adjudicate_copies=(),
    reasons_per_stratum: int | None = None, pairs_design: str | None = None,
    pairs_count: int | None = None,
) -> SessionCreated:
    """Create a draft session on a run, with one item per copy (or per finding).

    The guest cap is BLINDJUDGE_DEFAULT_GUEST_CAP unless one is given (None: no cap).
    Side effects: creates the Session (random URL id, allocation seed drawn and stored) and its
    Items; issues the guest code when guests are allowed (see judging.services.guests_configure);
    appends a `session.created` audit event.
    `by_task` (copies sessions on a run of several tasks): each judge gets every copy of each task
    they get, tasks allocated balanced and whole while they fit in items per judge (at least one
    task per judge), in an order that interleaves the tasks (content.draws.by_task_pick and
    draw_order_by_task). It is a creation setting: the draft's edits leave it as created.
    Refuses a findings session on a run without findings, items per judge outside 1..items, model
    names as reviewer labels when they would name a builder, malformed decision rules (or rules
    naming a reviewer, condition or builder the run lacks), a malformed draw seed, by task on a
    findings session or on a run of one task (every judge would get every copy: the setting would
    do nothing but override items per judge), and a rubric, instructions or preregistration that
    holds the draw seed (it tells each code's builder: `_refuse_draw_seed`).
    `advance_on_key` (judging speed, outside the protocol): a verdict key records the verdict and
    shows the next item. `mark_disagreement` (a treatment, frozen with the protocol): phase-2
    reviewer rows that disagree with the judge's phase-1 verdict are marked. `instructions` (the
    host's markdown to judges) and `minutes_per_item` (their time estimate) as the draft's edits
    check them. `verdict_min_shown_ms` (frozen with the protocol): a verdict key or click counts
    only once the item's copy has been shown this long, 0..MAX_VERDICT_MIN_SHOWN_MS.
    `task_flags` (copies sessions only, frozen with the protocol when on): judges may flag a task
    as invalid (judging.services.flags.task_flag_record); only then may the preregistration hold
    an exclude_tasks rule.
    An adjudication (judging.services.adjudication) holds the run's findings of unknown truth,
    its copies of unknown truth with `unknown_copies`, and the findings and copies named by
    bundle id in `adjudicate_findings` and `adjudicate_copies`; every judge-facing setting that
    shows or asks more than one phase alone is refused on it (`_check_adjudication`).
    A reasons session (judging.services.reasons) holds the run's default-condition reviews, or
    with `reasons_per_stratum` N at most N of each stratum, drawn with a seed from the session's
    draws (recorded; committed by its hash in the protocol); guests, by task, task flags,
    scorecards and marked disagreements are refused on it.
    A pairs session (judging.services.pairs) holds pairs of copies of one task by two builders:
    with `pairs_design` "all" (the default) every such pair, with "balanced" `pairs_count` of
    them, each builder pair equally often and the tasks as evenly as possible, drawn with a seed
    from the session's draws (recorded; committed by its hash in the protocol); by task, task
    flags, scorecards and marked disagreements are refused on it.
    """
    if kind not in SessionKind.values:
        raise Invalid(f'kind "{kind}" is not one of {", ".join(SessionKind.values)}')
    reviewer_display = _checked_reviewer_display(reviewer_display, run)
    if draw_seed:
        try:
            if len(bytes.fromhex(draw_seed)) != 32:
                raise ValueError
        except ValueError:
            raise Invalid("draw seed: expected 64 hexadecimal characters") from None
    rubric = checked_text(rubric, field="rubric")
    instructions = checked_text(instructions, field="instructions")
    minutes_per_item = _checked_minutes_per_item(minutes_per_item)
    verdict_min_shown_ms = _checked_verdict_min_shown_ms(verdict_min_shown_ms)
    task_flags = _checked_task_flags(task_flags, kind)
    preregistration = _checked_preregistration(preregistration, run, task_flags=task_flags,
                                               kind=kind)
    _refuse_draw_seed(draw_seed, rubric=rubric, instructions=instructions,
                      preregistration=preregistration)
    draws = Draws(draw_seed)
    reasons_seed, reasons_sample = "", None
    pairs_seed, pairs_drawn = "", None
    if reasons_per_stratum is not None and kind != SessionKind.REASONS:
        raise Invalid("per stratum: only a reasons session samples reviews")
    if (pairs_design is not None or pairs_count is not None) and kind != SessionKind.PAIRS:
        raise Invalid("design and number of pairs: only a pairs session has them")
    if kind != SessionKind.ADJUDICATION and (unknown_copies or adjudicate_findings
                                             or adjudicate_copies):
        raise Invalid("only an adjudication takes items of unknown truth or named items to "
                      "adjudicate")
    # Each item's (copy, finding, review, key, second copy).
    if kind == SessionKind.ADJUDICATION:
        _check_adjudication(guests_allowed=guests_allowed, items_per_judge=items_per_judge,
                            by_task=by_task, scorecards=scorecards,
                            mark_disagreement=mark_disagreement, preregistration=preregistration)
        sources = [(c, f, None, key, None) for c, f, key in adjudication_sources(
            run, unknown_copies=unknown_copies, findings=adjudicate_findings,
            copies=adjudicate_copies)]
    elif kind == SessionKind.REASONS:
        _check_reasons(guests_allowed=guests_allowed, by_task=by_task, task_flags=task_flags,
                       scorecards=scorecards, mark_disagreement=mark_disagreement)
        per_stratum = _checked_per_stratum(reasons_per_stratum)
        if per_stratum is not None:
            reasons_seed = draws.hex("reasons")
        drawn, reasons_sample = reasons_sources(run, per_stratum=per_stratum, seed=reasons_seed)
        sources = [(c, None, r, key, None) for c, r, key in drawn]
        if not sources:
            raise Invalid(f"run {run.pk} has no review under its default condition "
                          f"({run.default_condition}); a reasons session audits reviews")
    elif kind == SessionKind.PAIRS:
        _check_pairs(by_task=by_task, task_flags=task_flags, scorecards=scorecards,
                     mark_disagreement=mark_disagreement)
        pairs_design = pairs_design or "all"
        if pairs_design == "balanced":
            pairs_seed = draws.hex("pairs")
        drawn, pairs_drawn = pairs_sources(run, design=pairs_design, count=pairs_count,
                                           seed=pairs_seed)
        sources = [(first, None, None, key, second) for first, second, key in drawn]
    elif kind == SessionKind.FINDINGS:
        sources = [(f.copy, f, None, f.bundle_id, None) for f in run.findings.select_related("copy")]
        if not sources:
            raise Invalid(f"run {run.pk} has no findings; a findings session needs some")
    else:
        sources = [(c, None, None, c.bundle_id, None) for c in run.copies.defer("content")]
    items_per_judge = _checked_items_per_judge(items_per_judge, len(sources))
    by_task = _checked_by_task(by_task, kind, run)
    if guest_cap is DEFAULT_GUEST_CAP:
        guest_cap = settings.BLINDJUDGE_DEFAULT_GUEST_CAP or None
    check_guest_cap(guest_cap)

    with transaction.atomic():
        session = Session.objects.create(
            run=run, url_id=Draws().symbols("url", "abcdefghijkmnpqrstuvwxyz23456789", 22),
            kind=kind, rubric=rubric, preregistration=preregistration,
            items_per_judge=items_per_judge, by_task=by_task, guest_cap=guest_cap,
            reviewer_display=reviewer_display, scorecards=scorecards, draw_seed=draw_seed,
            allocation_seed=draws.hex("allocation"), advance_on_key=bool(advance_on_key),
            mark_disagreement=bool(mark_disagreement), instructions=instructions,
            minutes_per_item=minutes_per_item, verdict_min_shown_ms=verdict_min_shown_ms,
            task_flags=task_flags, reasons_sample=reasons_sample, reasons_seed=reasons_seed,
            pairs_design=pairs_drawn, pairs_seed=pairs_seed,
        )
        Item.objects.bulk_create(
            Item(session=session, copy=copy, task_id=copy.task_id, finding=finding, review=review,
                 key=key, pair_copy=second)
            for copy, finding, review, key, second in sources
        )
        audit.record("session.created", actor=actor, session=session, kind=kind,
                     items=len(sources), items_per_judge=items_per_judge, by_task=by_task,
                     task_flags=task_flags)
        guest_code = None
        if guests_allowed:
            guest_code = guests_configure(session=session, allow=True, actor=actor).guest_code
    return SessionCreated(session=session, guest_code=guest_code)


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


def blinding_dismiss(*, session: Session, matches: list[str], actor: str) -> Session:
    """Keep blinding-check matches on purpose on a draft session (`import openai` in code that
    judges must judge): each match text, as the check lists it, is recorded by its decision key
    (content.blinding.decision_key: case folded, invisible characters dropped), so every match of
    that text counts as decided.

    Side effects: adds the keys (deduplicated, in order) to the session's dismissed list; appends
    a `blinding.dismissed` audit event. The list freezes with the protocol at opening and the
    report shows it. Refused once the session has opened, and for an empty text.
    """
    keys = [decision_key(checked_text(m, field="pattern")) for m in matches]
    if not all(keys):
        raise Invalid("dismiss: name the matched text to keep (it is empty)")
    with transaction.atomic():
        session = _locked_session(session)
        _require_state(session, SessionState.DRAFT, doing="change the blinding decisions")
        added = [k for k in dict.fromkeys(keys) if k not in session.blinding_dismissed]
        session.blinding_dismissed = session.blinding_dismissed + added
        session.save(update_fields=["blinding_dismissed"])
        audit.record("blinding.dismissed", actor=actor, session=session, matches=added)
    return session


def blinding_undismiss(*, session: Session, matches: list[str], actor: str) -> Session:
    """Take back a dismissal on a draft session: the match is undecided again.

    Side effects: removes the keys from the dismissed list; appends a `blinding.undismissed`
    audit event. Refused once the session has opened, and for a text that was not dismissed.
    """
    keys = [decision_key(m) for m in matches]
    with transaction.atomic():
        session = _locked_session(session)
        _require_state(session, SessionState.DRAFT, doing="change the blinding decisions")
        unknown = [m for m, k in zip(matches, keys, strict=True)
                   if k not in session.blinding_dismissed]
        if unknown:
            raise Invalid("not a dismissed match: " + ", ".join(repr(m) for m in unknown))
        session.blinding_dismissed = [k for k in session.blinding_dismissed if k not in keys]
        session.save(update_fields=["blinding_dismissed"])
        audit.record("blinding.undismissed", actor=actor, session=session, matches=keys)
    return session


def protocol_of(session: Session, *, screening_seed: str | None = None) -> dict:
    """The protocol as it freezes at opening.

    It holds what judges are asked and how (the items' tasks by key, title and statement hash, the
    rubric, items by key, task and content hash, items per judge, redactions, reviewer display,
    preregistration and rules, allocation seed) and nothing of truth or builder identity, so it
    can be shown by hash to judges. The primary builder comparison, when the preregistration names
    one, is frozen with it (as content.rules resolved it: a reviewer by bundle id), and so is the
    marking of the phase-2 rows that disagree with a judge, when the session marks them (a
    treatment). It names its canonical form ("canonical": RFC 8785), which its hash and every
    judge's commitment use. Judging speed (`advance_on_key`) is not in it: it changes how fast a
    judge answers, not what they are shown.
    Where an exclude_judge rule reads the controls, it freezes "screening": the share of them
    drawn for screening and the SHA-256 of the seed that draws them (`screening_seed`, the
    opening's; a fresh one by default), never the seed or the drawn items: they would tell which
    items are controls. Both are published at the reveal.
    """
    block = _check_rules(session.preregistration, "preregistration", session.run,
                         task_flags=session.task_flags, kind=session.kind)
    items = []
    # The content hash is stored: the copies' content (megabytes each) and the tasks' statements
    # are never needed here.
    for item in (session.items.select_related("copy", "finding", "task", "review", "pair_copy")
                 .defer("copy__content", "task__statement", "review__request",
                        "pair_copy__content").order_by("key")):
        entry = {"key": item.key, "task": item.task.bundle_id, "copy_sha256": item.copy.content_sha256}
        if item.pair_copy_id:
            entry["second_copy_sha256"] = item.pair_copy.content_sha256
        if item.finding_id:
            entry["finding_sha256"] = sha256_hex(item.finding.text.encode("utf-8"))
        if item.review_id:
            # What the audit reads of the review: its verdict and the hash of its reason.
            entry["review"] = {"verdict": item.review.verdict,
                               "reason_sha256": sha256_hex(item.review.reason.encode("utf-8"))}
        items.append(entry)
    tasks = [{"key": t.bundle_id, "title": t.title, "format": t.format,
              "statement_sha256": sha256_hex(t.statement.encode("utf-8"))}
             for t in _tasks_of(session)]
    protocol = {
        "blindjudge_protocol": PROTOCOL_VERSION,
        # The canonical form the protocol and its judges' commitments are hashed in (RFC 8785);
        # a protocol frozen before it names none and stays in the legacy form (content.canonical).
        FORM_KEY: CURRENT,
        "kind": session.kind,
        "tasks": tasks,
        "rubric": session.rubric,
        "items": items,
        "items_per_judge": session.items_per_judge,
        "redaction_patterns": session.redaction_patterns,
        "reviewer_display": session.reviewer_display,
        "scorecards": session.scorecards,
        "preregistration": session.preregistration,
        "decision_rules": block.rules,
        "allocation_seed": session.allocation_seed,
    }
    if session.blinding_dismissed:
        # The blinding-check matches kept on purpose: with the redactions, what the host decided
        # judges may read. Only when there are any, so every protocol frozen before (and its
        # hash) stays as it was.
        protocol["blinding_dismissed"] = session.blinding_dismissed
    if session.instructions:
        # The host's instructions to judges, frozen as the rubric is (as text); only when written,
        # like the estimate below, so the protocols (and hashes) of every other session stay.
        protocol["instructions"] = session.instructions
    if session.minutes_per_item != DEFAULT_MINUTES_PER_ITEM:
        protocol["minutes_per_item"] = session.minutes_per_item
    if session.verdict_min_shown_ms != DEFAULT_VERDICT_MIN_SHOWN_MS:
        # What counts as a verdict given on purpose (a key or click only after the copy has been
        # shown this long) shapes what is measured, so it freezes; named only when not the
        # default, as the estimate above, so every other protocol (and its hash) stays as it was.
        protocol["verdict_min_shown_ms"] = session.verdict_min_shown_ms
    if session.by_task:
        # Only when set, so the protocols (and hashes) of every other session stay as they were.
        protocol["by_task"] = True
    if session.task_flags:
        # Judges may flag tasks as invalid: what they are asked, so it freezes; only when set, as
        # by_task, so every other protocol (and its hash) stays as it was.
        protocol["task_flags"] = True
    if session.mark_disagreement:
        # What phase 2 shows is the treatment being measured, so marking the reviewers' rows that
        # disagree with the judge's phase-1 verdict freezes with it. Only when set, as by_task:
        # absent means unmarked, and every protocol frozen before (and its hash) stays as it was.
        protocol["mark_disagreement"] = True
    if session.reasons_sample is not None:
        # How a reasons session's reviews were drawn (all, or per stratum with the seed's hash:
        # the seed is published at the reveal); only for reasons sessions, as above.
        protocol["reasons_sample"] = session.reasons_sample
    if session.pairs_design is not None:
        # How a pairs session's pairs were chosen (all, or balanced with the seed's hash: the
        # seed is published at the reveal); only for pairs sessions, as above.
        protocol["pairs_design"] = session.pairs_design
    if block.primary_comparison is not None:
        # Likewise only when the preregistration names it.
        protocol["primary_comparison"] = block.primary_comparison
    if block.actions:
        # The rules that act (content.rules ACTIONS: exclude_tasks), as written; only when any,
        # as above. What the report analyses again without follows from them and the locked
        # flags, never from a choice made after seeing the data.
        protocol["actions"] = list(block.actions)
    share = screening_share(block.actions)
    if share is not None:
        # The commitment to the seed that draws the screening controls (content.draws
        # .screening_items), only when a rule reads them, as above. Neither the seed nor what it
        # draws: the protocol holds no truth, and a judge who knew which items screen could
        # answer those with care and the rest without.
        seed = screening_seed or screening_seed_of(session)
        protocol["screening"] = {"share": share, "seed_sha256": screening_commitment(seed)}
    if block.alpha is not None:
        # The significance level the report reads its tests at, when the preregistration names
        # one (else 0.05); only then, as above.
        protocol["alpha"] = block.alpha
    # The unit every interval and p-value of the report resamples, frozen before any verdict
    # (issue 28 item 1): the run's declared clusters where its copies name any, else its tasks.
    protocol["resampling_unit"] = resampling_unit(session.run)
    return protocol


SCREENING_DRAWN = "screening.drawn"  # the audit event holding the screening seed


def screening_seed_of(session: Session) -> str:
    """The seed that draws the session's screening controls: from the session's draws, so a
    session with a pinned draw seed draws the same ones again."""
    return Draws(session.draw_seed).hex("screening")


def screening_commitment(seed_hex: str) -> str:
    """What the protocol freezes of the screening seed: the SHA-256 of its 32 bytes, in hex."""
    return sha256_hex(bytes.fromhex(seed_hex))


def resampling_unit(run) -> dict:
    """{"by": "cluster" | "task" | None, "units": how many}: clusters where any copy of the run
    names one (a copy without one is its task's own unit), else tasks where there are several,
    else None (one task, no clusters: nothing to resample). As reports.loading reads the run."""
    copies = list(run.copies.values_list("task_id", "cluster"))
    if any(cluster for _, cluster in copies):
        return {"by": "cluster",
                "units": len({("cluster", c) if c else ("task", t) for t, c in copies})}
    tasks = len({t for t, _ in copies})
    return {"by": "task", "units": tasks} if tasks > 1 else {"by": None, "units": 1 if tasks else 0}


# An opening renders first, then opens. While it renders, it holds a claim on the session (its
# random id in the session's render row, refreshed with every batch it stores): a second opening
# meanwhile is refused; a claim not refreshed for OPEN_LEASE_SECONDS (the process died) may be
# taken over, and the renders already stored are reused.
OPEN_ATTEMPTS = 3


def _tasks_of(session: Session):
    """The tasks of the session's items, in import order."""
    return Task.objects.filter(pk__in=session.items.values("task_id")).order_by("position")


def _inputs_of(session: Session) -> str:
    # Task statements are imported texts and never change; their hashes stand for them.
    tasks = canonical_sha256([[t.bundle_id, sha256_hex(t.statement.encode("utf-8"))]
                              for t in _tasks_of(session)])
    return renders.inputs_sha256(task=tasks, rubric=session.rubric,
                                 patterns=session.redaction_patterns,
                                 instructions=session.instructions)


def _claim_opening(session: Session, opener: str) -> tuple[Session, str]:
    """Claim the draft for this opening (one short transaction); throw away renders made for
    other inputs (the redactions or the rubric changed since a failed opening)."""
    with transaction.atomic():
        session = _locked_session(session)
        _require_state(session, SessionState.DRAFT, doing="open")
        key = _inputs_of(session)
        now = timezone.now()
        claim = SessionRender.objects.select_for_update().filter(session=session).first()
        if (claim and claim.opener and claim.opener != opener and claim.opener_seen_at
                and (now - claim.opener_seen_at).total_seconds() < OPEN_LEASE_SECONDS):
            raise Conflict(f"cannot open: session {session.pk} is being opened already (its items "
                           "are being rendered); wait for that to finish")
        if claim is None:
            claim = SessionRender(session=session)
        if claim.inputs_sha256 != key:
            claim.rubric_html = claim.instructions_html = ""
        claim.inputs_sha256, claim.opener, claim.opener_seen_at = key, opener, now
        claim.complete, claim.failure = False, ""
        claim.save()
        for model in (TaskRender, CopyRender, FindingRender):
            model.objects.filter(session=session).exclude(inputs_sha256=key).delete()
    return session, key


def _still_claimed(session: Session, opener: str, **fields) -> None:
    """Refresh the claim (and store `fields` on the render row); refuse if it was taken over.

    Locks the session row first, the order every opening takes (session, then claim): the renders
    stored after this need the session row for their foreign key, and a second opening holding
    the session while it waits for the claim would otherwise deadlock with this batch."""
    Session.objects.select_for_update(no_key=True).filter(pk=session.pk).values_list("pk").first()
    if not SessionRender.objects.filter(session=session, opener=opener).update(
            opener_seen_at=timezone.now(), **fields):
        raise Conflict(f"cannot open: another opening of session {session.pk} took over")


def _render(session: Session, opener: str, key: str) -> None:
    """Render what is missing, outside any transaction; store it batch by batch, each batch in a
    short transaction of its own (other sessions' judges keep saving meanwhile), counting what is
    stored on the claim (the host's page shows it). Each text has BLINDJUDGE_RENDER_SECONDS
    (renders.deadline), past which it is rendered as plain text."""
    patterns, seconds = session.redaction_patterns, settings.BLINDJUDGE_RENDER_SECONDS
    models = renders.app_models()
    total = sum(renders.expected_counts(models, session.pk))
    rendered = sum(renders.stored_counts(models, session.pk, key))  # an earlier attempt's
    rubric_html = renders.prose_of(session.rubric, patterns, seconds=seconds)
    instructions_html = renders.prose_of(session.instructions, patterns, seconds=seconds)
    with transaction.atomic():
        _still_claimed(session, opener, rubric_html=rubric_html,
                       instructions_html=instructions_html, rendered=rendered, to_render=total)
    del rubric_html, instructions_html
    # An adjudicator is shown no model's verdict, ever: a copy's reviews are not even rendered;
    # nor in a reasons session, whose judges read the one review they audit (its ReviewRender).
    for batch in renders.render_batches(models, session.pk, key, patterns,
                                        condition=session.run.default_condition, seconds=seconds,
                                        reviews=session.kind not in (SessionKind.ADJUDICATION,
                                                                     SessionKind.REASONS)):
        rendered += len(batch)
        with transaction.atomic():
            _still_claimed(session, opener, rendered=rendered)
            renders.store(models, batch)


def _open_rendered(session: Session, opener: str, key: str, actor: str) -> Session | None:
    """The short transaction that opens the session, or None when its redactions or rubric
    changed while it was being rendered (the caller renders again)."""
    with transaction.atomic():
        session = _locked_session(session)
        _require_state(session, SessionState.DRAFT, doing="open")
        claim = SessionRender.objects.select_for_update().get(session=session)
        if claim.opener != opener:
            raise Conflict(f"cannot open: another opening of session {session.pk} took over")
        if _inputs_of(session) != key:
            return None
        expected = renders.expected_counts(renders.app_models(), session.pk)
        if renders.stored_counts(renders.app_models(), session.pk, key) != expected:
            return None
        seed = screening_seed_of(session)
        protocol = protocol_of(session, screening_seed=seed)  # checks the rules again
        session.protocol = protocol
        session.protocol_sha256 = canonical_sha256(protocol, form_of(protocol))
        session.decision_rules = protocol["decision_rules"]
        session.state = SessionState.OPEN
        session.opened_at = timezone.now()
        session.save(update_fields=[
            "protocol", "protocol_sha256", "decision_rules", "state", "opened_at",
        ])
        claim.complete, claim.opener, claim.opener_seen_at = True, "", None
        claim.save(update_fields=["complete", "opener", "opener_seen_at"])
        audit.record("session.opened", actor=actor, session=session,
                     protocol_sha256=session.protocol_sha256)
        if "screening" in protocol:
            # The seed itself, kept host-side in the append-only log (nothing can change it after
            # the protocol commits to it) until the report publishes it at the reveal; the host's
            # page never shows it (judging.selectors.host.session_events).
            audit.record(SCREENING_DRAWN, actor=actor, session=session, seed=seed,
                         seed_sha256=protocol["screening"]["seed_sha256"])
        live.session_state_changed(session)
    return session


def _openable(session: Session) -> Session:
    """The draft, checked for what refuses an opening before anything is claimed or rendered."""
    fresh = Session.objects.select_related("run").get(pk=session.pk)
    _require_state(fresh, SessionState.DRAFT, doing="open")
    _check_rules(fresh.preregistration, "preregistration", fresh.run,
                 task_flags=fresh.task_flags, kind=fresh.kind)
    if fresh.kind == SessionKind.ADJUDICATION:
        refuse_adjudicated_elsewhere(fresh)
    try:
        # A draft can hold a pattern accepted before RE2 ran them (a lookaround, a backreference):
        # say so here, with what to do, never fail halfway through rendering.
        compile_patterns(fresh.redaction_patterns)
    except PatternError as error:
        raise Invalid(f"cannot open: {error}. Withdraw that pattern on the blinding page (or with "
                      "`redactions --withdraw`) and accept one RE2 can run") from None
    return fresh


def _refuse_undecided(session: Session) -> None:
    # Every name the check finds is redacted or kept on purpose before anything freezes: a leak
    # frozen into a protocol cannot be taken back (issue 24 item 7).
    undecided = blinding_check(session, counts=False)["undecided"]
    if undecided:
        raise Invalid(undecided_refusal(undecided))


def _new_opener() -> str:
    return Draws().hex("opener")[:32]


def session_open_start(*, session: Session, actor: str) -> Session:
    """Start opening a draft from the host's page: the checks of `session_open`, then the claim
    (a second opening is refused at once), then a process of its own (judging.opening) renders
    and opens it with `session_open`, counting its progress on the claim, which the host's page
    shows (`opening_progress`). Rendering model output never runs in a serving process: whatever
    a copy does to the renderer, other sessions' judges are not kept waiting. A refusal found by
    the process, or its end without opening, is kept on the claim (`failure`) for the page."""
    fresh = _openable(session)
    opener = _new_opener()
    claimed, _key = _claim_opening(fresh, opener)
    try:
        _refuse_undecided(claimed)
        opening.start(session_id=fresh.pk, opener=opener, actor=actor)
    except BaseException:
        _release_claim(fresh.pk, opener)
        raise
    return claimed


def opening_failed(*, session_id: int, opener: str, message: str, claimed_only: bool = False) -> None:
    """Keep why an opening started from the page stopped, for the host's page; unless another
    opening has claimed the session since (its own outcome is the one to show). `claimed_only`:
    only if this opening still holds its claim (its process was killed before it let go)."""
    openers = (opener,) if claimed_only else (opener, "")
    SessionRender.objects.filter(session_id=session_id, opener__in=openers).update(
        failure=message[:2000], opener="", opener_seen_at=None)


def _release_claim(session_id: int, opener: str) -> None:
    SessionRender.objects.filter(session_id=session_id, opener=opener).update(
        opener="", opener_seen_at=None)


def session_open(*, session: Session, actor: str, opener: str | None = None) -> Session:
    """Open a draft session: everything its judges will see is rendered, then its protocol freezes.

    First (no state changes yet, nothing held for long): the decision rules are validated
    (unknown metrics or operators, and reviewers, conditions or builders the run does not have,
    are refused here, never at report time); a session whose blinding check has a match neither
    redacted nor dismissed is refused, naming the matches; the opening claims the
    draft; every copy's frame, every finding text and default-condition review reason, every task
    statement and the rubric are rendered with the session's redactions and stored, in batches,
    each in its own short transaction. Then, in one short transaction: stores the protocol with
    the SHA-256 of its canonical JSON (RFC 8785, content.canonical) and the time; moves the
    session to open; appends a `session.opened` audit event with the protocol hash.
    A second opening while one renders is refused (Conflict); an opening that fails leaves its
    renders for the next one, which renders only what is missing, and only for the session's
    redactions and rubric as they are then (if they change while it renders, it renders again).
    `opener`: the claim `session_open_start` made for the process it started (None: a new one).
    Each text's rendering has a deadline (BLINDJUDGE_RENDER_SECONDS; in the main thread only:
    renders.deadline), past which it is shown as plain text.
    """
    fresh = _openable(session)
    opener = opener or _new_opener()
    try:
        for _ in range(OPEN_ATTEMPTS):
            claimed, key = _claim_opening(fresh, opener)
            # After the claim (a second opening is refused at once, not after scanning every copy)
            # and with the redactions as this attempt renders them; a refusal gives the claim back
            # (finally).
            _refuse_undecided(claimed)
            _render(claimed, opener, key)
            opened = _open_rendered(claimed, opener, key, actor)
            if opened is not None:
                return opened
        raise Conflict(f"cannot open: the redactions or the rubric of session {fresh.pk} kept "
                       "changing while it was being rendered; open it again")
    finally:
        _release_claim(fresh.pk, opener)


def prereg_amend(*, session: Session, text: str, actor: str) -> PreregAmendment:
    """Add a dated amendment to an opened session's preregistration (the frozen text stays).

    Side effects: stores the amendment with its hash and time, marked before or after the first
    verdict in the session; if it holds a `rules` block, those rules replace the rules in force
    (validated now, against the run too); appends a `prereg.amended` audit event. Refused on
    drafts (edit the preregistration itself), after the reveal, when its block names a primary
    builder comparison or an alpha other than the frozen one (the protocol's, or the default),
    and when it holds the session's draw seed.
    """
    text = checked_text(text, field="amendment").strip()
    if not text:
        raise Invalid("amendment: the text is empty")
    _refuse_draw_seed(session.draw_seed, amendment=text)
    block = _check_rules(text, "amendment", session.run, task_flags=session.task_flags,
                         kind=session.kind)
    rules = block.rules
    with transaction.atomic():
        session = _locked_session(session)
        _require_state(session, SessionState.OPEN, SessionState.CLOSED, doing="amend")
        frozen = session.protocol.get("primary_comparison", DEFAULT_PRIMARY)
        if block.primary_comparison not in (None, frozen):
            raise Invalid("amendment: primary_comparison: the primary comparison froze when the "
                          f"session opened ({json.dumps(frozen, sort_keys=True)}); an amendment "
                          "cannot change it")
        frozen_alpha = session.protocol.get("alpha", DEFAULT_ALPHA)
        if block.alpha not in (None, frozen_alpha):
            raise Invalid(f"amendment: alpha: the significance level froze when the session "
                          f"opened ({frozen_alpha:g}); an amendment cannot change it")
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


UNCHANGED = object()


def session_update_draft(
    *, session: Session, actor: str, rubric=UNCHANGED, preregistration=UNCHANGED,
    items_per_judge=UNCHANGED, reviewer_display=UNCHANGED, scorecards=UNCHANGED,
    advance_on_key=UNCHANGED, mark_disagreement=UNCHANGED,
    instructions=UNCHANGED, minutes_per_item=UNCHANGED, verdict_min_shown_ms=UNCHANGED,
    task_flags=UNCHANGED,
) -> Session:
    """Change a draft session's rubric, preregistration, items per judge, reviewer display,
    scorecards, advance on key or marking of disagreements, the shortest time a copy is shown
    before a verdict counts, or its instructions to judges and their minutes-per-item estimate; a
    field left UNCHANGED keeps its value.

    Validation is session_create's: text normalised and bounded, items per judge within 1..items
    (None means all), model names as reviewer labels refused where they would name a builder,
    malformed decision rules (or rules naming what the run lacks) refused, a text holding the
    session's draw seed refused. Everything is checked before anything is written.
    Side effects: updates the given fields of the session; appends a `session.updated` audit
    event naming the changed fields (never their text). Refused once the session has opened (the
    protocol is frozen; amend the preregistration instead). Task flags on a findings session are
    refused, and so is a preregistration with an exclude_tasks rule where, after the edit, the
    session would not collect task flags (turning them off under such a rule included).
    """
    changes = {}
    if rubric is not UNCHANGED:
        changes["rubric"] = checked_text(rubric, field="rubric")
    if task_flags is not UNCHANGED:
        changes["task_flags"] = _checked_task_flags(task_flags, session.kind)
    flags_after = changes.get("task_flags", session.task_flags)
    if preregistration is not UNCHANGED:
        changes["preregistration"] = _checked_preregistration(preregistration, session.run,
                                                              task_flags=flags_after,
                                                              kind=session.kind)
    elif "task_flags" in changes:
        _checked_preregistration(session.preregistration, session.run, task_flags=flags_after,
                                 kind=session.kind)
    if reviewer_display is not UNCHANGED:
        changes["reviewer_display"] = _checked_reviewer_display(reviewer_display, session.run)
    if scorecards is not UNCHANGED:
        changes["scorecards"] = bool(scorecards)
    if advance_on_key is not UNCHANGED:
        changes["advance_on_key"] = bool(advance_on_key)
    if mark_disagreement is not UNCHANGED:
        changes["mark_disagreement"] = bool(mark_disagreement)
    if instructions is not UNCHANGED:
        changes["instructions"] = checked_text(instructions, field="instructions")
    if minutes_per_item is not UNCHANGED:
        changes["minutes_per_item"] = _checked_minutes_per_item(minutes_per_item)
    if verdict_min_shown_ms is not UNCHANGED:
        changes["verdict_min_shown_ms"] = _checked_verdict_min_shown_ms(verdict_min_shown_ms)
    _refuse_draw_seed(session.draw_seed, **{field: changes.get(field) for field in
                                            ("rubric", "instructions", "preregistration")})
    if session.kind == SessionKind.ADJUDICATION:
        _check_adjudication(scorecards=changes.get("scorecards"),
                            mark_disagreement=changes.get("mark_disagreement"),
                            preregistration=changes.get("preregistration", ""),
                            items_per_judge=None if items_per_judge is UNCHANGED else items_per_judge)
    with transaction.atomic():
        session = _locked_session(session)
        _require_state(session, SessionState.DRAFT, doing="edit the draft")
        if items_per_judge is not UNCHANGED:
            changes["items_per_judge"] = _checked_items_per_judge(items_per_judge, session.items.count())
        changed = [name for name, value in changes.items() if getattr(session, name) != value]
        for name in changed:
            setattr(session, name, changes[name])
        if changed:
            session.save(update_fields=changed)
            audit.record("session.updated", actor=actor, session=session, fields=changed)
    return session


UNSET = object()


@dataclass(frozen=True)
class GuestSettings:
    session: Session
    guest_code: str | None  # set only when a new code was issued by this call


def guests_configure(*, session: Session, actor: str, allow: bool | None = None,
                     cap=UNSET, rotate: bool = False) -> GuestSettings:
    """Allow or deny guests, cap their number, rotate the guest code.

    A code is stored only hashed, so it is shown once, when issued: allowing guests issues one if
    none is active, and rotating replaces it (the old one stops working at once). Denying guests
    revokes the active code. Side effects: updates the session's guest settings, issues or
    revokes guest-code credentials, appends `guests.configured`.
    """
    if cap is not UNSET:
        check_guest_cap(cap)
    with transaction.atomic():
        session = Session.objects.select_for_update().get(pk=session.pk)
        if session.state == SessionState.REVEALED:
            raise Conflict("the session is revealed; guest settings no longer apply")
        if allow and session.kind == SessionKind.ADJUDICATION:
            raise Invalid(NO_GUESTS)
        fields = []
        if allow is not None:
            session.guests_allowed = allow
            fields.append("guests_allowed")
        if cap is not UNSET:
            session.guest_cap = cap
            fields.append("guest_cap")
        if rotate and not session.guests_allowed:
            raise Conflict("guests are not allowed in this session; allow them first")
        if fields:
            session.save(update_fields=fields)
        active = Credential.objects.filter(session=session, kind=CredentialKind.GUEST,
                                           revoked_at__isnull=True)
        code = None
        now = timezone.now()
        if not session.guests_allowed:
            active.update(revoked_at=now)
        elif rotate or not active.exists():
            active.update(revoked_at=now)
            draws = Draws()  # guest codes are credentials: always from the OS CSPRNG
            code = new_guest_code(draws, "guest")
            issue_credential(CredentialKind.GUEST, session=session, token=code)
        audit.record("guests.configured", actor=actor, session=session,
                     allowed=session.guests_allowed, cap=session.guest_cap,
                     new_code=code is not None)
    return GuestSettings(session=session, guest_code=code)


@dataclass(frozen=True)
class GuestRemoved:
    judge: object
    guest_code: str | None  # the new code when it was rotated


def guest_remove(*, judge, actor: str, rotate_code: bool) -> GuestRemoved:
    """Remove a judge who came with the guest code and, if asked, rotate the code in the same
    step: otherwise the person can join again with it, as a new guest.

    Side effects: judge_remove's (the judge marked removed, their credentials revoked,
    `judge.removed`, their sockets closed after commit); with `rotate_code`, guests_configure's
    rotation (the old code revoked, a new one issued, `guests.configured`), all in one
    transaction. Refused for a judge who did not come as a guest, and rotation is refused when
    guests are not allowed now (no code works then; allowing guests again issues a new one).
    """
    if judge.admitted_as != AdmittedAs.GUEST:
        raise Invalid(f"judge {judge.pseudonym} did not join with the guest code")
    with transaction.atomic():
        session = Session.objects.select_for_update().get(pk=judge.session_id)
        if rotate_code and not session.guests_allowed:
            raise Conflict("guests are not allowed in this session, so no guest code works now; "
                           "remove the judge without rotating")
        removed = judge_remove(judge=judge, actor=actor)
        code = None
        if rotate_code:
            code = guests_configure(session=session, actor=actor, rotate=True).guest_code
    return GuestRemoved(judge=removed, guest_code=code)
