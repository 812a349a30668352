from blindjudge.commands import HostCommand
from content.pairs_plan import DESIGN_EFFECT
from judging.selectors.commands import get_run
from judging.services import pairs_overview, pairs_plan_on


class Command(HostCommand):
    help = ("Before a pairs session: how many comparisons and judges a target half-width needs on "
            "this run (docs/statistics.md, \"Pairs\"), and what the run offers.")

    def add_command_arguments(self, parser):
        parser.add_argument("run")
        parser.add_argument("--half-width", type=float, default=0.10, metavar="H",
                            help="the target: half the width of the 95%% interval (default 0.10)")
        parser.add_argument("--target", choices=["difference", "accuracy"], default="difference",
                            help="difference: a builder-vs-builder difference in win rate "
                                 "(default); accuracy: a judge type's pairwise accuracy against "
                                 "truth, over the run's pairs of one good and one defective copy")
        parser.add_argument("--pairs-per-judge", type=int, default=20, metavar="N",
                            help="pairs each judge takes (default 20)")
        parser.add_argument("--design", choices=["all", "balanced"], default="all",
                            help="all: every pair of builders on every task (default); balanced: "
                                 "--pairs N of them")
        parser.add_argument("--pairs", type=int, metavar="N",
                            help="balanced design: how many pairs")
        parser.add_argument("--design-effect", type=float, default=DESIGN_EFFECT, metavar="D",
                            help=f"how much correlated answers cost (default {DESIGN_EFFECT}; 1 "
                                 "for independent answers)")

    def run(self, *, run, half_width, target, pairs_per_judge, design, pairs=None,
            design_effect=DESIGN_EFFECT, **options):
        the_run = get_run(run)
        overview = pairs_overview(the_run)
        plan = pairs_plan_on(the_run, half_width, target=target, pairs_per_judge=pairs_per_judge,
                             design=design, balanced_count=pairs, design_effect=design_effect,
                             overview=overview)
        return {"run": the_run.pk, "offered_pairs": overview["pairs"],
                "truth_differing_pairs": overview["truth_differing_pairs"],
                "comparisons": plan["comparisons"], "judges": plan["judges"],
                "pairs_per_judge": plan["pairs_per_judge"],
                "judgings_per_pair": plan["judgings_per_pair"], "plan": plan}

    def describe(self, result: dict) -> list[str]:
        plan = result["plan"]
        what = ("a builder-vs-builder difference in win rate" if plan["target"] == "difference"
                else "a judge type's pairwise accuracy against truth")
        lines = [f"run {result['run']}: {plan['builders']} builders, {plan['tasks']} tasks, "
                 f"{result['offered_pairs']} pairs of two builders' copies of one task "
                 f"({result['truth_differing_pairs']} of one good and one defective copy)",
                 f"target: ±{plan['half_width']:.2f} (95%) on {what}, design effect "
                 f"{plan['design_effect']:g}",
                 f"needs {result['comparisons']} answers: {result['judges']} judges at "
                 f"{result['pairs_per_judge']} pairs each, each pair judged "
                 f"{result['judgings_per_pair']} times"]
        if plan["per_builder_pair"]:
            lines.append(f"({plan['per_builder_pair']} comparisons per builder pair; the design "
                         f"offers {plan['per_builder_pair_offered']} distinct pairs per builder "
                         f"pair)")
        return lines
