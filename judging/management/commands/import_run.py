from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError
from django.db.models import Count

from blindjudge.commands import HostCommand
from judging.management.lookups import get_host
from judging.services import run_import


class Command(HostCommand):
    help = "Import a run bundle (format blindjudge.run/1) for a host; prints the run id."

    def add_command_arguments(self, parser):
        parser.add_argument("bundle", help="path to the bundle JSON file")
        parser.add_argument("--host", required=True, help="the owning host's username")

    def run(self, *, bundle, host, **options):
        owner = get_host(host)
        path = Path(bundle)
        try:
            size = path.stat().st_size
            if size > settings.BLINDJUDGE_MAX_BUNDLE_BYTES:
                # Read nothing of a file we would refuse anyway.
                raise CommandError(
                    f"bundle: {size} bytes exceeds the limit of "
                    f"{settings.BLINDJUDGE_MAX_BUNDLE_BYTES} bytes"
                )
            raw = path.read_bytes()
        except FileNotFoundError:
            raise CommandError(f"no such file: {bundle}") from None
        except IsADirectoryError:
            raise CommandError(f"{bundle} is a directory, not a bundle file") from None
        except OSError as error:
            raise CommandError(f"cannot read {bundle}: {error.strerror}") from None
        run = run_import(host=owner, raw=raw, actor=f"host:{owner.user.username}")
        return {"run": run.pk, "name": run.name, "copies": run.copies.count(),
                "findings": run.findings.count(), "manifest_sha256": run.manifest_sha256,
                "seals": dict(_count_seals(run))}

    def describe(self, result):
        seals = ", ".join(f"{n} {k}" for k, n in sorted(result["seals"].items())) or "no reviews"
        return [f"run {result['run']} imported: {result['name']}",
                f"{result['copies']} copies, {result['findings']} findings; reviews: {seals}",
                f"manifest sha256: {result['manifest_sha256']}"]


def _count_seals(run):
    return run.reviews.values_list("seal").annotate(n=Count("id")).values_list("seal", "n")
