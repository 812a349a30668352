"""Forms of the host's pages. They convert and label input; the services validate it.

Every field has a label (rendered as `<label for>`); help texts are tied to their control by
Django's `aria-describedby`. A service refusal is added to the form as a non-field error, so the
page shows it above the fields and keeps everything the host typed.

Every text field has the limit its service holds it to (`limit_text`, the settings
`BLINDJUDGE_MAX_*`, read per form so a changed setting applies): over it, the field says which
limit and by how much, and the text stays in the box. Text areas get no `maxlength`: a browser
would cut a paste short without a word.
"""

import re

from django import forms
from django.conf import settings
from django.core.validators import MaxLengthValidator

from judging.enums import CopyTruth, FindingTruth, ReviewerDisplay, SessionKind
from judging.services import (
    DEFAULT_VERDICT_MIN_SHOWN_MS,
    GITHUB_LOGIN,
    MAX_GUEST_CAP,
    MAX_VERDICT_MIN_SHOWN_MS,
    display_name_limit,
    text_limit,
)

MAX_GITHUB_LOGINS = 500  # per submission of the invitations form
MAX_PATTERNS = 200  # per submission of the blinding page's form

TEXTAREA = forms.Textarea(attrs={"rows": 6})


def add_service_error(form: forms.Form, message: str):
    """A service refusal as non-field errors, one per line of its message."""
    for line in message.splitlines() or [message]:
        if line.strip():
            form.add_error(None, line)


class HostForm(forms.Form):
    """Labels without Django's trailing colon; text fields bounded by `limits`
    (field name -> the name its service checks it under, see judging.services.text_limit)."""

    limits: dict[str, str] = {}

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        for name, checked_as in self.limits.items():
            limit_text(self.fields[name], text_limit(checked_as))


def limit_text(field: forms.CharField, limit: int, *, browser_cap: bool = False):
    """Hold a text field to `limit` characters, with a message naming the field and the limit."""
    field.max_length = limit
    field.validators.append(MaxLengthValidator(
        limit, message=f"{field.label}: at most {limit:,} characters "
                       "(this has %(show_value)s); nothing was saved."))
    if browser_cap:
        field.widget.attrs["maxlength"] = str(limit)


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Any number of files (none when not required); each held to the bundle size limit."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        files = data if isinstance(data, (list, tuple)) else ([data] if data else [])
        return [super(MultipleFileField, self).clean(one, initial) for one in files]


IMPORT_SOURCES = [
    ("bundle", "A run bundle (blindjudge.run/1 or run/2 JSON)"),
    ("jsonl", "A table of outputs, JSON Lines"),
    ("csv", "A table of outputs, CSV (UTF-8, header row)"),
    ("swebench", "SWE-bench predictions and evaluation reports"),
    ("inspect", "Inspect evaluation logs"),
]
ONE_LINE = forms.TextInput()


_TABLES = ("jsonl", "csv")
_CONVERTED = ("jsonl", "csv", "swebench", "inspect")
# The formats each field is read for (every field but the format and "Import again"). The page
# shows the chosen format's fields only, by a style rule and no script (static/host/host.css,
# `form.by-format`); where a browser cannot apply it, every field shows, each saying which
# format it is for. What is read is decided on the server alone, by the format posted.
IMPORT_FIELD_FORMATS = {
    "bundle": ("bundle",),
    **dict.fromkeys(("outputs", "outputs_per_builder", "per_builder_models", "truth_equals",
                     "column_map", "values", "builder", "builder_family", "reviews", "review_map",
                     "copy_format"), _TABLES),
    **dict.fromkeys(("predictions", "reports", "dataset", "instances", "seed", "instance_ids",
                     "instances_file", "empty_patch"), ("swebench",)),
    **dict.fromkeys(("logs", "truth_scorer", "truth_values", "review_scorer", "grader", "epoch"),
                    ("inspect",)),
    **dict.fromkeys(("families", "name", "cluster"), _CONVERTED),
}


class RunImportForm(HostForm):
    """A run bundle, or the files of another format with the options of `import_run --from`.

    The page shows the fields of the chosen format (IMPORT_FIELD_FORMATS); each also says which
    format it is for. The files are checked only for size here; the importer and then the run
    validator check the rest and every problem they find is listed above the fields.
    """

    source = forms.ChoiceField(
        label="Format", choices=IMPORT_SOURCES, initial="bundle", required=False,
        help_text="What the files are. The fields below are that format's; only they are read.")
    bundle = forms.FileField(
        label="Run bundle (JSON file, blindjudge.run/1 or run/2)", required=False,
        help_text="For “run bundle”. The whole bundle is checked before anything is written; "
                  "every problem is listed.")
    outputs = forms.FileField(
        label="Table of outputs (JSONL or CSV)", required=False,
        help_text="For JSONL and CSV: one row per output (a builder's answer to a task). A file "
                  "that is one JSON list of rows is read too.")
    outputs_per_builder = MultipleFileField(
        label="Or one table of outputs per builder (JSONL or CSV)", required=False,
        help_text="For JSONL and CSV, instead of one table: each builder's outputs in its own "
                  "file, named below.")
    per_builder_models = forms.CharField(
        label="Builder of each table", required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text="MODEL=FILE NAME, one a line, for each table of outputs per builder "
                  "(e.g. qwen2.5-7b=qwen.jsonl).")
    truth_equals = forms.CharField(
        label="Truth from two columns", required=False, widget=ONE_LINE,
        help_text="For JSONL and CSV, e.g. pred=answer: tests_pass where the two columns hold "
                  "the same answer, tests_fail where they differ or the answer is empty.")
    column_map = forms.CharField(
        label="Column map", required=False, widget=ONE_LINE,
        help_text="For JSONL and CSV, e.g. task=prompt,builder=model,content=response,"
                  "truth=label,copy=id. Targets: task and content (required), builder (or a "
                  "constant builder below), truth, copy, statement, title, cluster, defect.")
    values = forms.CharField(
        label="Value maps", required=False, widget=ONE_LINE,
        help_text="For JSONL and CSV, e.g. truth:buggy=seeded_defect,correct=known_good "
                  "verdict:PASS=pass,FAIL=fail,NONE=abstain condition:clean=clean.")
    builder = forms.CharField(
        label="Constant builder", required=False, widget=ONE_LINE,
        help_text="For JSONL and CSV when the table has no builder column: the model that "
                  "wrote every output.")
    builder_family = forms.CharField(
        label="Constant builder's family", required=False, widget=ONE_LINE,
        help_text="The organisation of the constant builder (when its name is not a known model).")
    reviews = forms.FileField(
        label="Reviews (same format as the outputs)", required=False,
        help_text="For JSONL and CSV, optional: one row per review.")
    review_map = forms.CharField(
        label="Review column map", required=False, widget=ONE_LINE,
        help_text="For the reviews file, e.g. reviewer=model,copy=item,verdict=verdict,"
                  "condition=condition (or task=…,builder=… instead of copy).")
    copy_format = forms.ChoiceField(
        label="Copies are", choices=[("text", "text"), ("markdown", "markdown"), ("diff", "diff")],
        initial="text", required=False,
        help_text="For JSONL and CSV: how the outputs are shown to judges.")
    predictions = MultipleFileField(
        label="Predictions (SWE-bench, one or more files)", required=False,
        help_text="For SWE-bench: the predictions files (JSON or JSONL), one per model.")
    reports = MultipleFileField(
        label="Evaluation reports (SWE-bench, one or more files)", required=False,
        help_text="For SWE-bench: the harness's report for each predictions file.")
    dataset = forms.FileField(
        label="Dataset (SWE-bench)", required=False,
        help_text="For SWE-bench, optional: the instances' problem statements (JSON or JSONL).")
    instances = forms.IntegerField(
        label="Instances (SWE-bench)", required=False, min_value=1,
        help_text="For SWE-bench, optional: a seeded sample of this many instances.")
    seed = forms.CharField(label="Sampling seed (SWE-bench)", required=False, initial="0",
                           widget=ONE_LINE)
    instance_ids = forms.CharField(
        label="Instance ids (SWE-bench)", required=False, widget=ONE_LINE,
        help_text="For SWE-bench, optional: import exactly these instances (separated by spaces "
                  "or commas), instead of a sample.")
    instances_file = forms.FileField(
        label="Instances file (SWE-bench)", required=False,
        help_text="For SWE-bench, optional: the instances to import, one id a line (or a JSON "
                  "list).")
    empty_patch = forms.ChoiceField(
        label="An empty patch is (SWE-bench)", required=False, initial="fail",
        choices=[("fail", "unresolved (tests_fail), as SWE-bench counts it"),
                 ("unknown", "unknown")])
    logs = MultipleFileField(
        label="Evaluation logs (Inspect, one or more files)", required=False,
        help_text="For Inspect: the .eval or .json logs.")
    truth_scorer = forms.CharField(
        label="Truth scorer (Inspect)", required=False, widget=ONE_LINE,
        help_text="For Inspect: the scorer whose value is the truth of an output.")
    truth_values = forms.CharField(
        label="Truth values (Inspect)", required=False, widget=ONE_LINE,
        help_text="For Inspect, e.g. C=known_good,I=seeded_defect.")
    review_scorer = forms.CharField(
        label="Review scorer (Inspect)", required=False, widget=ONE_LINE,
        help_text="For Inspect, optional: a model-graded scorer read as a review.")
    grader = forms.CharField(
        label="Grader model (Inspect)", required=False, widget=ONE_LINE,
        help_text="For Inspect, optional: the review scorer's grader model, for finished logs "
                  "that do not record it (its family below if it is not a known model).")
    epoch = forms.IntegerField(label="Epoch (Inspect)", required=False, min_value=1, initial=1)
    families = forms.CharField(
        label="Model families", required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text="For every format but a bundle: MODEL=ORG, one a line, for models whose "
                  "organisation is not known.")
    name = forms.CharField(label="Run name", required=False, widget=ONE_LINE,
                           help_text="For every format but a bundle, optional.")
    cluster = forms.CharField(
        label="Resampling units", required=False, widget=ONE_LINE,
        help_text="How tasks group for the report's intervals: task (each task its own unit, "
                  "the default; a table's cluster column if it has one), repo (SWE-bench: by "
                  "repository), eval (Inspect: by eval task), or a table's column name.")
    again = forms.BooleanField(
        label="Import again", required=False,
        help_text="Import it even if one of your runs has the same manifest (the same tasks, "
                  "copies and reviews): otherwise that is refused as a second import by mistake.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, formats in IMPORT_FIELD_FORMATS.items():
            # Read by host/_form.html: the classes the field's box carries.
            self.fields[name].format_classes = "format-field " + " ".join(
                f"for-{source}" for source in formats)

    def clean(self):
        data = super().clean()
        limit = settings.BLINDJUDGE_MAX_BUNDLE_BYTES
        for name in ("bundle", "outputs", "outputs_per_builder", "reviews", "dataset",
                     "predictions", "reports", "logs", "instances_file"):
            given = data.get(name)
            for upload in given if isinstance(given, list) else [given] if given else []:
                if upload.size > limit:
                    # Read nothing of a file we would refuse anyway.
                    self.add_error(name, f"{upload.name}: {upload.size} bytes exceeds the limit "
                                         f"of {limit} bytes")
        source = data["source"] = data.get("source") or "bundle"
        needed = {"bundle": "bundle", "jsonl": "outputs", "csv": "outputs",
                  "swebench": "predictions", "inspect": "logs"}.get(source)
        if needed == "outputs" and data.get("outputs_per_builder"):
            needed = None
        if needed and not data.get(needed) and needed not in self.errors:
            self.add_error(needed, f"This field is required for the format {source}.")
        return data


class _SessionSettings(HostForm):
    limits = {"rubric": "rubric", "preregistration": "preregistration"}

    rubric = forms.CharField(
        label="Rubric", required=False, widget=TEXTAREA,
        help_text="What judges are asked to decide, shown beside every item.",
    )
    preregistration = forms.CharField(
        label="Preregistration", required=False, widget=TEXTAREA,
        help_text="Free text, optionally ending in a ```rules block of decision rules (JSON). "
                  "It freezes when the session opens; later changes are dated amendments. "
                  "Never the draw seed of a session created with one (it tells each code's "
                  "builder): it is refused here, in the rubric and in the instructions.",
    )
    items_per_judge = forms.IntegerField(
        label="Items per judge", required=False, min_value=1,
        help_text="Empty: every judge gets every item. Otherwise a balanced, seeded allocation.",
    )
    reviewer_display = forms.ChoiceField(
        label="Reviewers in phase 2 are shown as", choices=ReviewerDisplay.choices,
        initial=ReviewerDisplay.LETTERS,
        help_text="Model names are refused where a reviewer's model or family is also a builder's.",
    )
    scorecards = forms.BooleanField(
        label="Judges see their own scorecard after the reveal", required=False,
    )
    advance_on_key = forms.BooleanField(
        label="One key per decision: a verdict key records it and shows the next item",
        required=False, initial=True,
        help_text="Judging speed only, not part of the protocol. Off: a key or click picks the "
                  "verdict and the judge saves it with a button (pick, then save).",
    )
    verdict_min_shown_ms = forms.IntegerField(
        label="Shortest time a copy is shown before a verdict counts (milliseconds)",
        min_value=0, max_value=MAX_VERDICT_MIN_SHOWN_MS, initial=DEFAULT_VERDICT_MIN_SHOWN_MS,
        required=False,
        help_text="A verdict key or click sooner than this after the copy appears is dropped, "
                  "never queued, and the judge is told: a held or bounced key, or a double click, "
                  "cannot answer items nobody saw. Frozen with the protocol; 0: no minimum; "
                  f"empty: {DEFAULT_VERDICT_MIN_SHOWN_MS}.",
    )

    def clean_verdict_min_shown_ms(self):
        value = self.cleaned_data["verdict_min_shown_ms"]
        return DEFAULT_VERDICT_MIN_SHOWN_MS if value is None else value
    task_flags = forms.BooleanField(
        label="Judges may flag a task as invalid (underspecified, tests unfair, other)",
        required=False, initial=False,
        help_text="Copies sessions: at any item of a task, a judge may flag it with a severity "
                  "0-3 and a reason, once per task and phase, locked with the phase. You see the "
                  "flags only after the reveal, in the report. Frozen with the protocol; an "
                  "exclude_tasks rule in the preregistration needs it.",
    )
    mark_disagreement = forms.BooleanField(
        label="In phase 2, mark the reviewers' verdicts that disagree with the judge's own",
        required=False, initial=False,
        help_text="A treatment: it changes what phase 2 measures, so it freezes with the protocol "
                  "when the session opens. Off by default: the rows are shown unmarked.",
    )


class SessionCreateForm(_SessionSettings):
    field_order = ["kind", "rubric", "preregistration", "items_per_judge", "by_task",
                   "guests_allowed", "guest_cap", "reviewer_display", "scorecards",
                   "advance_on_key", "verdict_min_shown_ms", "mark_disagreement", "task_flags"]

    kind = forms.ChoiceField(
        label="Judges judge", choices=[
            (SessionKind.COPIES, "each copy (pass / fail)"),
            (SessionKind.FINDINGS, "each finding (real / false alarm)"),
            (SessionKind.ADJUDICATION, "an adjudication: the findings of unknown truth, decided "
                                       "once, blind, by one adjudicator outside the matrix"),
            (SessionKind.REASONS, "the model reviewers' reasons (grounded or not in the copy)"),
            (SessionKind.PAIRS, "pairs: two builders' copies of one task side by side, which is "
                                "better")],
        initial=SessionKind.COPIES,
    )
    # Shown folded below the common settings (host/_form.html): they apply to an adjudication
    # or a reasons session only.
    folded_fields = ("pairs_design", "pairs_count", "reasons_per_stratum", "unknown_copies",
                     "adjudicate_findings", "adjudicate_copies")
    folded_title = "For pairs, an adjudication or an audit of reasons"

    @property
    def folded_open(self) -> bool:
        return self.is_bound and any(
            self[name].errors or self[name].value() not in (None, "", False)
            for name in self.folded_fields)

    pairs_design = forms.ChoiceField(
        label="Pairs: design", required=False, choices=[
            ("", "every pair of builders on every task"),
            ("balanced", "a balanced sample of the number of pairs below")],
        help_text="Balanced: each pair of builders equally often, each task as evenly as "
                  "possible, drawn with a recorded seed.",
    )
    pairs_count = forms.IntegerField(
        label="Pairs: how many (balanced design)", required=False, min_value=1,
    )
    reasons_per_stratum = forms.IntegerField(
        label="Reasons: reviews per stratum", required=False, min_value=1,
        help_text="At most this many reviews of each reviewer × right or wrong verdict × truth "
                  "class, drawn with a recorded seed, so correct verdicts are audited as much as "
                  "wrong ones. Empty: every review.",
    )
    unknown_copies = forms.BooleanField(
        label="Adjudication: its copies of unknown truth too (pass / fail)", required=False,
    )
    adjudicate_findings = forms.CharField(
        label="Adjudication: also these findings (bundle ids)", required=False, max_length=20000,
        help_text="Separated by spaces or commas, whatever their truth: e.g. findings whose truth "
                  "was corrected, to check the correction.",
    )
    adjudicate_copies = forms.CharField(
        label="Adjudication: also these copies (bundle ids)", required=False, max_length=20000,
        help_text="Separated by spaces or commas, whatever their truth.",
    )

    def clean_adjudicate_findings(self):
        return tuple(self.cleaned_data["adjudicate_findings"].replace(",", " ").split())

    def clean_adjudicate_copies(self):
        return tuple(self.cleaned_data["adjudicate_copies"].replace(",", " ").split())
    by_task = forms.BooleanField(
        label="By task: each judge gets every copy of each task they get", required=False,
        help_text="Copies sessions on a run of several tasks, so builders can be compared within "
                  "one judge. Whole tasks are allocated while they fit in the items per judge "
                  "(at least one task each); the order interleaves the tasks.",
    )
    guests_allowed = forms.BooleanField(
        label="Allow guests (anyone with the guest code)", required=False,
    )
    guest_cap = forms.IntegerField(
        label="Most guests admitted", required=False, min_value=1, max_value=MAX_GUEST_CAP,
        help_text="Empty: no cap.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        default = settings.BLINDJUDGE_DEFAULT_GUEST_CAP or None
        self.fields["guest_cap"].initial = default
        if default:
            self.fields["guest_cap"].help_text = (
                f"{default} unless you change it (BLINDJUDGE_DEFAULT_GUEST_CAP); empty: no cap.")


class DraftForm(_SessionSettings):
    prefix = "draft"


class InstructionsForm(HostForm):
    limits = {"instructions": "instructions"}

    instructions = forms.CharField(
        label="Instructions to judges (markdown)", required=False,
        widget=forms.Textarea(attrs={"rows": 14}),
        help_text="Shown to every judge on their instructions page, which the welcome page and "
                  "every item link to, rendered like the rubric: inert (no HTML runs, links shown "
                  "as text) with the accepted redactions applied. They freeze when the session "
                  "opens. The page adds what the product knows itself: the number of items, the "
                  "time estimate, the keys, the two phases and the marks.",
    )
    minutes_per_item = forms.IntegerField(
        label="Minutes per item (your estimate)", min_value=1, max_value=240, initial=3,
        help_text="Judges are told about items × this many minutes for phase 1.",
    )


class RedactionAcceptForm(HostForm):
    prefix = "accept"
    limits = {}

    patterns = forms.CharField(
        label="Patterns to redact, one per line", widget=forms.Textarea(attrs={"rows": 3}),
        help_text="A literal name (matched case-insensitively at name boundaries) or re:REGEX. "
                  "Judges see each match as [redacted].",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        limit_text(self.fields["patterns"], MAX_PATTERNS * (text_limit("pattern") + 1))

    def clean_patterns(self):
        lines = [line.strip() for line in self.cleaned_data["patterns"].splitlines()]
        patterns = [line for line in lines if line]
        if not patterns:
            raise forms.ValidationError("Give at least one pattern.")
        if len(patterns) > MAX_PATTERNS:
            raise forms.ValidationError(f"At most {MAX_PATTERNS} patterns at a time "
                                        f"(this has {len(patterns):,}).")
        limit = text_limit("pattern")
        long = [i for i, pattern in enumerate(patterns, start=1) if len(pattern) > limit]
        if long:
            raise forms.ValidationError([
                f"Pattern {i}: at most {limit:,} characters (this has {len(patterns[i - 1]):,})."
                for i in long[:10]])
        return patterns


class PlannerForm(HostForm):
    psi = forms.FloatField(
        label="ψ: expected share of discordant pairs", min_value=0,
        help_text="The share of items where phase 1 and phase 2 disagree in correctness, "
                  "e.g. 0.25.",
    )
    delta = forms.FloatField(
        label="δ: the difference in accuracy you want to detect", min_value=0,
        help_text="p₁₀ − p₀₁, e.g. 0.15. Must satisfy δ² < ψ.",
    )
    alpha = forms.FloatField(label="α: two-sided level", initial=0.05, required=False)
    power = forms.FloatField(label="Power (1 − β)", initial=0.80, required=False)


class PairsPlanForm(HostForm):
    half_width = forms.FloatField(
        label="Target: half-width of the 95% interval", min_value=0.005, max_value=0.5,
        initial=0.10, help_text="e.g. 0.10 for ±10 points.")
    target = forms.ChoiceField(
        label="Of", initial="difference", choices=[
            ("difference", "a builder-vs-builder difference in win rate"),
            ("accuracy", "a judge type's pairwise accuracy against truth")])
    pairs_per_judge = forms.IntegerField(label="Pairs each judge takes", min_value=1,
                                         initial=20)
    design_effect = forms.FloatField(
        label="Design effect", min_value=1, initial=1.5, required=False,
        help_text="How much correlated answers (one judge's, one task's) cost; 1 for "
                  "independent answers.")


class AmendForm(HostForm):
    prefix = "amend"
    limits = {"text": "amendment"}

    text = forms.CharField(
        label="Amendment", widget=TEXTAREA,
        help_text="Dated and marked as before or after the first verdict. A ```rules block "
                  "replaces the rules in force.",
    )


class InviteNameForm(HostForm):
    prefix = "invite"

    name = forms.CharField(
        label="Invitee's name",
        help_text="Shown to you and in the report (the anonymised export drops it).",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        limit_text(self.fields["name"], display_name_limit(), browser_cap=True)


class InviteListForm(HostForm):
    """A list of invitees, pasted or uploaded (an upload takes the place of the box). Converting
    and checking the list is the services' (invitee_text_from_file, invitee_list_parse); the view
    puts a file's text back in the box when a line is refused, so it is fixed in place."""
    prefix = "list"

    names = forms.CharField(
        label="Names, one a line",
        required=False,
        widget=forms.Textarea(attrs={"rows": 8}),
        help_text="A note may follow a name after a tab (a spreadsheet's two columns pasted), "
                  "\" — \" or \" | \": \"Ann Lee — backend team\". The note is yours: judges "
                  "never see it. Blank lines are skipped.",
    )
    upload = forms.FileField(
        label="Or a file: .txt (as above) or .csv (name, note; a header row \"name\" is skipped)",
        required=False,
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        limit_text(self.fields["names"], 500 * (display_name_limit() + 210))

    def clean(self):
        data = super().clean()
        if not (data.get("names") or "").strip() and not data.get("upload"):
            raise forms.ValidationError("Paste the names, or choose a file.")
        return data


class InviteGithubForm(HostForm):
    prefix = "github"

    logins = forms.CharField(
        label="GitHub logins, one per line (or separated by commas or spaces)",
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Each listed person joins by signing in with GitHub; no link is sent.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        limit_text(self.fields["logins"], MAX_GITHUB_LOGINS * 41)

    def clean_logins(self):
        logins = [login.lstrip("@") for login in re.split(r"[\s,]+", self.cleaned_data["logins"])]
        logins = list(dict.fromkeys(login for login in logins if login))
        if not logins:
            raise forms.ValidationError("Give at least one GitHub login.")
        if len(logins) > MAX_GITHUB_LOGINS:
            raise forms.ValidationError(f"At most {MAX_GITHUB_LOGINS} logins at a time "
                                        f"(this has {len(logins):,}).")
        bad = [login for login in logins if not GITHUB_LOGIN.fullmatch(login)]
        if bad:
            shown = ", ".join(f'"{login[:40]}{"…" if len(login) > 40 else ""}"' for login in bad[:10])
            raise forms.ValidationError(
                f"Not a GitHub login (1 to 39 letters, digits or single hyphens): {shown}"
                + (f" and {len(bad) - 10} more" if len(bad) > 10 else "") + ".")
        return logins


class GuestCapForm(HostForm):
    prefix = "cap"

    cap = forms.IntegerField(
        label="Most guests admitted", required=False, min_value=1, max_value=MAX_GUEST_CAP,
        help_text="Empty: no cap. Guests already admitted stay.",
    )


class TruthForm(HostForm):
    limits = {"note": "note"}

    truth = forms.ChoiceField(label="Corrected truth label")
    note = forms.CharField(
        label="Why the label is corrected", widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Kept with the date; the report scores under both versions.",
    )

    def __init__(self, *args, finding: bool, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["truth"].choices = (FindingTruth if finding else CopyTruth).choices


class ConfirmForm(HostForm):
    confirm = forms.BooleanField(label="I understand", required=True)

    def __init__(self, *args, label: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["confirm"].label = label
        self.fields["confirm"].error_messages["required"] = "Tick the box to confirm."
