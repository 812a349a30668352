from blindjudge.commands import HostCommand
from judging.selectors.commands import get_run
from judging.services import truth_correct


class Command(HostCommand):
    help = "Correct a copy's or finding's truth label (dated; the report scores both versions)."

    def add_command_arguments(self, parser):
        parser.add_argument("run")
        parser.add_argument("item", help="the copy's or finding's bundle id")
        parser.add_argument("truth")
        parser.add_argument("--note", required=True, help="why the label is corrected")

    def run(self, *, run, item, truth, note, **options):
        correction = truth_correct(run=get_run(run), item=item, truth=truth, note=note,
                                   actor="cli")
        return {"run": correction.run_id, "item": item, "old_truth": correction.old_truth,
                "new_truth": correction.new_truth,
                "corrected_at": correction.corrected_at.isoformat()}
