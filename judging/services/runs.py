"""Runs: importing a bundle whole, correcting a truth label later."""


from django.conf import settings
from django.db import transaction

from blindjudge.errors import Conflict, Invalid, NotFound
from content.bundle import BundleError, validate_bundle
from content.canonical import sha256_hex
from content.importers.conversion import at_host_places
from judging import audit
from judging.enums import CopyTruth, FindingTruth
from judging.models import (
    Builder,
    Comparison,
    Copy,
    Finding,
    FindingRaise,
    Review,
    Reviewer,
    Run,
    Task,
    TruthCorrection,
)
from judging.services.checks import bundle_limits, checked_text


def run_import(*, host, raw: bytes, actor: str, places: dict[str, str] | None = None,
               again: bool = True) -> Run:
    """Validate a run bundle whole, then write it as one run, or write nothing at all.

    Side effects: creates the Run with its manifest and hashes and the content seal check's
    patterns, its Builders, Copies, Reviewers, Reviews (each marked sealed, verdict_in_content,
    failed with the reason, or absent, with the verdict its request carries, if any: computed here,
    once, never at report time), Comparisons (run/2: a reviewer's preference between two copies
    of one task in the order it saw them, its request sealed as a review's, in bundle order) and
    Findings, in one transaction; appends a `run.imported` audit event.
    Raises Invalid whose message lists the problems in the bundle, one per line, each naming its
    place (`copies[3].builder: unknown builder "b9"`), every text held to its limit (settings
    BLINDJUDGE_MAX_*); past BLINDJUDGE_MAX_BUNDLE_ERRORS problems the last line says how many
    more there were. `places`: where a converted bundle's texts came from in the host's files
    (content.importers.common.Imported.places); a problem with one of them names that place.
    `again=False` (the host's command and page, unless the host says `--again`): a run whose
    manifest is the same as one of the host's runs is refused, naming that run, and nothing is
    written (the same files imported twice by mistake would make two runs of one experiment).
    """
    try:
        bundle = validate_bundle(
            raw,
            max_bundle_bytes=settings.BLINDJUDGE_MAX_BUNDLE_BYTES,
            max_copy_bytes=settings.BLINDJUDGE_MAX_COPY_BYTES,
            limits=bundle_limits(),
            max_errors=settings.BLINDJUDGE_MAX_BUNDLE_ERRORS,
        )
    except BundleError as error:
        if places:
            error = BundleError(at_host_places(error.errors, places), error.more)
        raise Invalid(str(error)) from None
    data = bundle.data
    run_record = data["run"]
    if not again:
        same = (Run.objects.filter(host=host, manifest_sha256=bundle.manifest_sha256)
                .order_by("pk").values_list("pk", "name").first())
        if same:
            raise Invalid(f"this run was imported already: run {same[0]} ({same[1]}) has the same "
                          f"manifest (sha256 {bundle.manifest_sha256[:12]}…); nothing was written. "
                          "To import it once more, ask for it again (import_run --again, or "
                          "“Import again” on the page)")
    with transaction.atomic():
        run = Run.objects.create(
            host=host, name=run_record["name"], format=bundle.format,
            bundle_run=bundle.original["run"], default_condition=run_record["default_condition"],
            abstain_scoring=run_record["abstain_scoring"], request_keys=bundle.request_keys,
            verdict_patterns=bundle.verdict_patterns,
            bundle_sha256=bundle.raw_sha256, manifest=bundle.manifest,
            manifest_sha256=bundle.manifest_sha256,
        )
        tasks = {
            t["id"]: Task(run=run, bundle_id=t["id"], title=t["title"], statement=t["statement"],
                          format=t["format"], cluster=t["cluster"], position=i)
            for i, t in enumerate(data["tasks"])
        }
        Task.objects.bulk_create(tasks.values())
        builders = {
            b["id"]: Builder(run=run, bundle_id=b["id"], model=b["model"], family=b["family"],
                             position=i)
            for i, b in enumerate(data["builders"])
        }
        Builder.objects.bulk_create(builders.values())
        copies = {
            c["id"]: Copy(
                run=run, bundle_id=c["id"], task=tasks[c["task"]], builder=builders[c["builder"]],
                format=c["format"], content=c["content"],
                content_sha256=sha256_hex(c["content"].encode("utf-8")),
                imported_truth=c["truth"], truth=c["truth"], defect=c["defect"],
                cluster=c["cluster"], position=i,
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
                condition=r["condition"], verdict=r["verdict"], reason=r["reason"],
                authorship_guess=r["authorship_guess"],
                request=r.get("request") or "", request_sha256=r.get("request_sha256") or "",
                seal=seal.outcome, seal_reason=seal.reason,
                content_verdict=seal.content_verdict,
                content_verdict_pattern=seal.content_verdict_pattern, position=i,
            )
            for i, (r, seal) in enumerate(zip(data.get("reviews", []), bundle.seals, strict=True))
        )
        Comparison.objects.bulk_create(
            Comparison(
                run=run, reviewer=reviewers[c["reviewer"]], first=copies[c["first"]],
                second=copies[c["second"]], condition=c["condition"], verdict=c["verdict"],
                reason=c["reason"], request=c.get("request") or "",
                request_sha256=c.get("request_sha256") or "", seal=seal.outcome,
                seal_reason=seal.reason, content_verdict=seal.content_verdict,
                content_verdict_pattern=seal.content_verdict_pattern, position=i,
            )
            for i, (c, seal) in enumerate(zip(data.get("comparisons", []), bundle.comparison_seals,
                                              strict=True))
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
        FindingRaise.objects.bulk_create(
            FindingRaise(finding=findings[f["id"]], reviewer=reviewers[reviewer],
                         condition=condition)
            for f in data.get("findings", [])
            for reviewer, condition in dict.fromkeys(
                (entry["reviewer"], entry["condition"]) for entry in f["raised_by"])
        )
        audit.record(
            "run.imported", actor=actor, run=run, bundle_sha256=bundle.raw_sha256,
            manifest_sha256=bundle.manifest_sha256, format=bundle.format, tasks=len(tasks),
            copies=len(copies), findings=len(findings),
            # Named only where there are some: a run without comparisons is recorded as before.
            **({"comparisons": len(bundle.comparison_seals)} if bundle.comparison_seals else {}),
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

