from blindjudge.commands import HostCommand, read_text_file
from blindjudge.links import guest_page
from judging.enums import ReviewerDisplay
from judging.selectors.commands import get_run
from judging.services import DEFAULT_MINUTES_PER_ITEM, DEFAULT_VERDICT_MIN_SHOWN_MS, session_create


class Command(HostCommand):
    help = "Create a draft session on a run; prints the session id (and the guest code)."

    def add_command_arguments(self, parser):
        parser.add_argument("run")
        parser.add_argument("--kind", required=True,
                            choices=["copies", "findings", "adjudication", "reasons", "pairs"],
                            help="copies: pass / fail per copy; findings: real / false alarm per "
                                 "finding; adjudication: the run's findings of unknown truth "
                                 "decided once, blind, by one adjudicator outside the matrix; "
                                 "reasons: people audit whether model reviews' reasons are "
                                 "grounded in the copy; pairs: two builders' copies of one task "
                                 "side by side, which is better")
        parser.add_argument("--design", choices=["all", "balanced"], dest="pairs_design",
                            help="pairs: every pair of builders on every task (all, the default) "
                                 "or --pairs N of them, each builder pair equally often and the "
                                 "tasks as evenly as possible (balanced, drawn with a recorded "
                                 "seed); `plan_pairs RUN` says how many a target needs")
        parser.add_argument("--pairs", type=int, metavar="N", dest="pairs_count",
                            help="pairs, balanced design: how many pairs")
        parser.add_argument("--per-stratum", type=int, metavar="N", dest="reasons_per_stratum",
                            help="reasons: at most N reviews of each stratum (reviewer × right "
                                 "or wrong verdict × truth class), drawn with a recorded seed "
                                 "(default: every review)")
        parser.add_argument("--unknown-copies", action="store_true",
                            help="adjudication: its copies of unknown truth too (pass / fail)")
        parser.add_argument("--finding", action="append", default=[], metavar="ID",
                            dest="adjudicate_findings",
                            help="adjudication: this finding too, whatever its truth (e.g. one "
                                 "whose truth was corrected, to check the correction); repeatable")
        parser.add_argument("--copy", action="append", default=[], metavar="ID",
                            dest="adjudicate_copies",
                            help="adjudication: this copy too, whatever its truth; repeatable")
        parser.add_argument("--rubric", metavar="FILE", help="the rubric judges read (text file)")
        parser.add_argument("--prereg", metavar="FILE",
                            help="the preregistration, optionally ending in a ```rules block")
        parser.add_argument("--items-per-judge", type=int, metavar="N",
                            help="items each judge gets (default: all), allocated balanced")
        parser.add_argument("--by-task", action="store_true",
                            help="copies sessions: each judge gets every copy of each task they "
                                 "get (whole tasks while they fit in --items-per-judge, at least "
                                 "one), in an order interleaving the tasks")
        parser.add_argument("--task-flags", action="store_true",
                            help="copies sessions: judges may flag a task as invalid "
                                 "(underspecified, tests unfair, other) with a severity 0-3 and a "
                                 "reason; the host sees the flags only after the reveal (frozen "
                                 "with the protocol; an exclude_tasks rule needs it)")
        parser.add_argument("--guests", action="store_true", help="allow guests by code")
        parser.add_argument("--guest-cap", type=int, metavar="N",
                            help="most guests admitted (default: BLINDJUDGE_DEFAULT_GUEST_CAP; "
                                 "`guests SESSION --cap 0` removes the cap)")
        parser.add_argument("--reviewer-names", action="store_true",
                            help="show reviewers by model name in phase 2 (refused where a "
                                 "reviewer shares a model or family with a builder)")
        parser.add_argument("--scorecards", action="store_true",
                            help="judges see their own scorecard after the reveal")
        parser.add_argument("--instructions", metavar="FILE",
                            help="the instructions judges read before they start (markdown file; "
                                 "frozen with the protocol at opening)")
        parser.add_argument("--minutes-per-item", type=int, metavar="N",
                            default=DEFAULT_MINUTES_PER_ITEM,
                            help="the judges' time estimate per item (default: "
                                 f"{DEFAULT_MINUTES_PER_ITEM})")
        parser.add_argument("--pick-then-save", action="store_true",
                            help="a verdict key picks the verdict and the judge saves it (default: "
                                 "one key per decision, recorded and on to the next item)")
        parser.add_argument("--verdict-min-shown-ms", type=int, metavar="MS",
                            default=DEFAULT_VERDICT_MIN_SHOWN_MS,
                            help="a verdict key or click counts only once the item's copy has "
                                 "been shown this long; earlier ones are dropped, so a held or "
                                 "bounced key answers nothing unseen (frozen with the protocol; "
                                 f"default: {DEFAULT_VERDICT_MIN_SHOWN_MS}; 0: no minimum)")
        parser.add_argument("--mark-disagreement", action="store_true",
                            help="phase 2 marks the reviewers' rows that differ from the judge's "
                                 "phase-1 verdict (a treatment, frozen with the protocol)")
        parser.add_argument("--draw-seed", metavar="HEX", default="",
                            help="pin every draw to this 64-hex seed (reproducible demos and "
                                 "audits); default: the OS CSPRNG. The seed derives every "
                                 "judge's order seed and salt: whoever holds it and the bundle's "
                                 "ids knows each code's builder before the reveal, so keep it "
                                 "secret until then (a rubric, instructions or preregistration "
                                 "holding it is refused)")

    def run(self, *, run, kind, rubric=None, prereg=None, items_per_judge=None, guests=False,
            guest_cap=None, reviewer_names=False, scorecards=False, draw_seed="", by_task=False,
            instructions=None, minutes_per_item=DEFAULT_MINUTES_PER_ITEM, pick_then_save=False,
            mark_disagreement=False, verdict_min_shown_ms=DEFAULT_VERDICT_MIN_SHOWN_MS, task_flags=False,
            unknown_copies=False, adjudicate_findings=(), adjudicate_copies=(),
            reasons_per_stratum=None, pairs_design=None, pairs_count=None, **options):
        created = session_create(
            run=get_run(run), kind=kind, actor="cli",
            rubric=read_text_file(rubric, "--rubric") if rubric else "",
            preregistration=read_text_file(prereg, "--prereg") if prereg else "",
            items_per_judge=items_per_judge, guests_allowed=guests,
            **({} if guest_cap is None else {"guest_cap": guest_cap}),
            reviewer_display=ReviewerDisplay.NAMES if reviewer_names else ReviewerDisplay.LETTERS,
            scorecards=scorecards, draw_seed=draw_seed, by_task=by_task,
            instructions=read_text_file(instructions, "--instructions") if instructions else "",
            minutes_per_item=minutes_per_item, advance_on_key=not pick_then_save,
            mark_disagreement=mark_disagreement, verdict_min_shown_ms=verdict_min_shown_ms,
            task_flags=task_flags, unknown_copies=unknown_copies,
            adjudicate_findings=tuple(adjudicate_findings),
            adjudicate_copies=tuple(adjudicate_copies), reasons_per_stratum=reasons_per_stratum,
            pairs_design=pairs_design, pairs_count=pairs_count,
        )
        result = {"session": created.session.pk, "state": created.session.state,
                  "items": created.session.items.count()}
        if created.guest_code:
            result.update(guest_code=created.guest_code, guest_page=guest_page())
        return result
