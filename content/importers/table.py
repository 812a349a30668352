"""A table of outputs (JSONL or CSV), and optionally a table of reviews, as a `blindjudge.run/2`
bundle. Pure: no Django.

The host says which of its columns holds what with a column map (`parse_map`), and how its
values read with value maps (`parse_value_maps`).

Outputs: one row a copy (one builder's output for one task). Targets:
- `task` (required): the task's text or id. The task's statement is this text unless a separate
  `statement` column is mapped (then `task` is the task's id and the statement its text).
- `content` (required): the builder's output, exactly as produced.
- `builder`: the model that built the copy. Required unless a constant builder is given
  (`builder=`, `builder_family=`): a table of one model's outputs often has no such column.
- `truth`: the copy's known truth (known_good | seeded_defect | tests_fail | tests_pass | unknown,
  after the value map); absent means unknown.
- `copy`: the copy's own id. Without it a copy is named by (task, builder), so a task built twice
  by one builder is refused: the rows could not be told apart, by the reviews or by anyone.
- `statement`, `title`, `cluster`: the task's (the same for every row of one task, or refused);
  `defect`: a note on the defect, kept on copies whose truth does not say they are good (a
  table's "change" column often says "none" or "renamed locals" on the good ones; those are
  counted in the summary's `skipped`).
Reviews: one row a review. Targets: `reviewer` (the reviewer model, required), `verdict`
(required; pass | fail | abstain after the value map), `condition` (default: the run's default
condition), `reason`, `reviewer_family`, and how the review names its copy: `copy` (the outputs'
copy id, as the seed data's `item` column does), or else `task` with `builder` (the outputs'
task and builder; `builder` may be left out when the outputs have one builder).

A target left out of the map reads the column of its own name where the file has one, so
`verdict`, `condition` or `content` columns need no entry. Value maps exist for `truth`,
`verdict` and `condition`; a value the map does not name passes if it is already valid, else it
is a problem naming its file and line.

Every problem is collected and raised at the end as one ConversionError; nothing else escapes,
whatever the bytes.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections import Counter

from content.bundle import FORMAT_2
from content.importers.common import (
    ConversionError,
    Families,
    Imported,
    Problems,
    Source,
    place,
)
from content.truth import COPY_TRUTHS, truth_class

VERDICTS = ("pass", "fail", "abstain")
COPY_FORMATS = ("text", "markdown", "diff")
ABSTAIN_SCORINGS = ("not_flagged", "excluded")
LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$")

OUTPUT_TARGETS = ("task", "content", "builder", "truth", "copy", "statement", "title",
                  "cluster", "defect")
REVIEW_TARGETS = ("reviewer", "verdict", "condition", "reason", "reviewer_family", "copy",
                  "task", "builder")
VALUE_MAP_FIELDS = ("truth", "verdict", "condition")
# A task's text longer than this is too long to be its id too; it gets a digest of itself.
MAX_TASK_ID = 100


# --- the host's maps -----------------------------------------------------------------------------

def parse_map(text: str) -> dict[str, str]:
    """`"task=prompt,builder=model"` -> `{"task": "prompt", "builder": "model"}` (target ->
    column). Which targets exist is the importer's to say (convert checks them)."""
    problems = Problems()
    out: dict[str, str] = {}
    for entry in (text or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        target, sep, column = entry.partition("=")
        target, column = target.strip(), column.strip()
        if not sep or not target or not column:
            problems.add("--map", f'"{entry}" is not TARGET=COLUMN')
        elif target in out:
            problems.add("--map", f'"{target}" is mapped twice ("{out[target]}" and "{column}")')
        else:
            out[target] = column
    problems.raise_if_any()
    return out


def parse_value_maps(text: str) -> dict[str, dict[str, str]]:
    """`"truth:buggy=seeded_defect,correct=known_good verdict:PASS=pass"` -> `{"truth": {"buggy":
    "seeded_defect", "correct": "known_good"}, "verdict": {"PASS": "pass"}}`: groups separated by
    spaces, each `FIELD:VALUE=TARGET,…`. `verdict:=abstain` maps an empty or missing cell."""
    problems = Problems()
    out: dict[str, dict[str, str]] = {}
    for group in (text or "").split():
        field_name, sep, pairs = group.partition(":")
        if not sep or not field_name:
            problems.add("--values", f'"{group}" is not FIELD:VALUE=TARGET,…')
            continue
        if field_name not in VALUE_MAP_FIELDS:
            problems.add("--values", f'"{field_name}" has no value map; the fields that have one '
                         f'are {", ".join(VALUE_MAP_FIELDS)}')
            continue
        mapping = out.setdefault(field_name, {})
        for pair in pairs.split(","):
            if not pair:
                continue
            value, sep, target = pair.partition("=")
            if not sep or not target:
                problems.add("--values", f'"{field_name}:{pair}" is not VALUE=TARGET')
            elif value in mapping and mapping[value] != target:
                problems.add("--values", f'{field_name} value "{value}" is mapped twice')
            else:
                mapping[value] = target
    for field_name, mapping in out.items():
        allowed = {"truth": COPY_TRUTHS, "verdict": VERDICTS}.get(field_name)
        for value, target in mapping.items():
            if allowed and target not in allowed:
                problems.add("--values", f'{field_name}: "{value}" maps to "{target}", which is '
                             f'not one of {", ".join(allowed)}')
            elif field_name == "condition" and not LABEL.match(target):
                problems.add("--values", f'condition: "{target}" is not a label (letters, '
                             "digits, _ . : -, at most 100)")
    problems.raise_if_any()
    return out


# --- reading rows --------------------------------------------------------------------------------

class _Row:
    """One record: its line in the file and its cells (column -> text; a null cell is absent)."""

    __slots__ = ("line", "cells")

    def __init__(self, line: int, cells: dict[str, str]):
        self.line = line
        self.cells = cells


def _decode(source: Source, problems: Problems) -> str | None:
    try:
        text = source.data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = source.data[:error.start].count(b"\n") + 1
        problems.add(place(source, line), f"not UTF-8 (byte {error.start + 1} of the file)")
        return None
    return text


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "holds a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "holds a lone surrogate (not a character)"
    return None


def _cell(value) -> str | None:
    """A JSON value as a cell's text; ValueError for a list or an object."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    raise ValueError("a list" if isinstance(value, list) else "an object")


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _jsonl_records(source: Source, text: str, problems: Problems):
    """(line, record) for each line of a JSONL file; a line that is not JSON is a problem."""
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line, parse_constant=_reject_constant)
        except RecursionError:
            problems.add(place(source, number), "nested too deeply")
        except ValueError as error:
            problems.add(place(source, number), f"not JSON ({str(error)[:120]})")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_SPACE = re.compile(r"[ \t\r\n]*")


def _array_records(source: Source, text: str, problems: Problems):
    """(line, record) for each element of a file that is one JSON array of records (a
    pretty-printed list, as many eval scripts write), each at the line where it starts."""
    def line_at(offset: int) -> int:
        return text.count("\n", 0, offset) + 1

    at = _SPACE.match(text, text.index("[") + 1).end()
    if text.startswith("]", at):
        at = _SPACE.match(text, at + 1).end()
    else:
        while True:
            try:
                record, end = _DECODER.raw_decode(text, at)
            except RecursionError:
                problems.add(place(source, line_at(at)), "nested too deeply")
                return
            except ValueError as error:
                problems.add(place(source, line_at(at)), f"not JSON ({str(error)[:120]})")
                return
            yield line_at(at), record
            at = _SPACE.match(text, end).end()
            if text.startswith(",", at):
                at = _SPACE.match(text, at + 1).end()
                continue
            if text.startswith("]", at):
                at = _SPACE.match(text, at + 1).end()
                break
            problems.add(place(source, line_at(at)), "not JSON (expected , or ] in the list)")
            return
    if at != len(text):
        problems.add(place(source, line_at(at)), "not JSON (more after the list's end)")


def _jsonl_rows(source: Source, problems: Problems) -> tuple[list[_Row], set[str]]:
    text = _decode(source, problems)
    if text is None:
        return [], None
    rows, columns = [], set()
    # A file that is one JSON list of records is read as its rows (a JSONL file's first line
    # is an object, never a list's opening bracket).
    records = (_array_records if text.lstrip().startswith("[") else _jsonl_records)(
        source, text, problems)
    for number, record in records:
        where = place(source, number)
        if not isinstance(record, dict):
            problems.add(where, "not a JSON object")
            continue
        cells = {}
        for key, value in record.items():
            try:
                cell = _cell(value)
            except ValueError as error:
                cells[key] = _Unreadable(f"is {error}, not text")
                columns.add(key)
                continue
            if cell is not None:
                cells[key] = cell
                columns.add(key)
        rows.append(_Row(number, cells))
    return rows, columns


class _Unreadable(str):
    """A cell that cannot be text (a JSON list or object): the problem is said only if a target
    reads it."""

    def __new__(cls, problem: str):
        out = super().__new__(cls, "")
        out.problem = problem
        return out


def _csv_rows(source: Source, problems: Problems) -> tuple[list[_Row], set[str]]:
    text = _decode(source, problems)
    if text is None:
        return [], None
    # A model's output is easily past csv's default field limit (128 KB); the file's own length
    # bounds every field, and the bundle's limits apply later.
    csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header, rows, line = None, [], 1
    while True:
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            problems.add(place(source, reader.line_num or line), f"not CSV ({error})")
            return rows, None
        start, line = line, reader.line_num + 1
        if header is None:
            header = [name.strip() for name in record]
            duplicated = sorted(name for name, n in Counter(header).items() if n > 1)
            if not any(header):
                problems.add(place(source, start), "the first row must name the columns")
                return [], set()
            if duplicated:
                problems.add(place(source, start, "header"),
                             f'column {", ".join(duplicated)} named twice')
            continue
        if not record or record == [""] * len(record) and len(record) <= 1:
            continue  # a blank line
        if len(record) != len(header):
            problems.add(place(source, start), f"{len(record)} cells where the header names "
                         f"{len(header)} columns")
            continue
        rows.append(_Row(start, {name: value for name, value in zip(header, record, strict=True) if name}))
    if header is None:
        problems.add(place(source), "empty: the first row must name the columns")
        return [], set()
    return rows, {name for name in header if name}


def _read(source: Source, table_format: str, problems: Problems):
    if table_format == "csv":
        return _csv_rows(source, problems)
    return _jsonl_rows(source, problems)


# --- mapping columns -----------------------------------------------------------------------------

class _Columns:
    """Which column each target reads: the map's, else the column of the target's own name."""

    def __init__(self, source: Source, column_map: dict[str, str], targets, required,
                 columns: set[str], rows: list[_Row], table_format: str, problems: Problems):
        self.source = source
        self.problems = problems
        self.of: dict[str, str] = {}
        if columns is None:  # unreadable: its columns cannot be known, nor said to be missing
            return
        for target in column_map:
            if target not in targets:
                problems.add(place(source), f'"{target}" is no target here; the targets are '
                             f'{", ".join(targets)}')
        for target in targets:
            column = column_map.get(target)
            if column is None and target in columns:
                column = target
            if column is None:
                continue
            if column not in columns:
                known = ", ".join(sorted(columns)[:30]) or "none"
                where = place(source, 1, "header") if table_format == "csv" else place(source)
                problems.add(where, f'no column "{column}" (mapped to {target}); the columns '
                             f"are: {known}")
                continue
            self.of[target] = column
        for target in required:
            if target not in self.of and target not in column_map:
                problems.add(place(source), f'no column for {target}: map one '
                             f'({target}=COLUMN)')

    def get(self, row: _Row, target: str, required: bool = False) -> str | None:
        column = self.of.get(target)
        if column is None:
            return None
        value = row.cells.get(column)
        where = place(self.source, row.line, column)
        if isinstance(value, _Unreadable):
            self.problems.add(where, value.problem)
            return None
        if value is None:
            if required:
                self.problems.add(where, f"missing (mapped to {target})")
            return None
        problem = _text_problem(value)
        if problem:
            self.problems.add(where, problem)
            return None
        return value

    def mapped(self, row: _Row, target: str, value_maps, allowed, required: bool):
        """The cell through the target's value map: a valid value or None (problem added)."""
        value = self.get(row, target)
        if target not in self.of:
            return None
        mapping = value_maps.get(target, {})
        key = "" if value is None else value
        if key in mapping:
            return mapping[key]
        if value is None or value.strip() == "":
            if required:
                self.problems.add(place(self.source, row.line, self.of[target]),
                                  f"missing (mapped to {target})")
            return None
        if allowed(value):
            return value
        self.problems.add(place(self.source, row.line, self.of[target]),
                          f'"{_short(value)}" is not a valid {target}; map it with '
                          f"--values {target}:{_short(value)}=…")
        return None


def _short(text: str, limit: int = 60) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "…"


def _task_id(text: str) -> str:
    text = text.strip()
    if len(text) <= MAX_TASK_ID and "\n" not in text:
        return text
    return "task-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# --- the conversion ------------------------------------------------------------------------------

def convert(*, outputs: Source | None, table_format: str, column_map: dict[str, str],
            value_maps: dict[str, dict[str, str]], builder: str | None,
            builder_family: str | None, reviews: Source | None,
            review_column_map: dict[str, str], families: Families, run_name: str = "",
            copy_format: str = "text", default_condition: str = "clean",
            abstain_scoring: str = "not_flagged",
            truth_equals: tuple[str, str] | None = None,
            per_builder: list[tuple[str, Source]] = ()) -> Imported:
    """`truth_equals` (PRED, ANSWER): a copy's truth from two of its columns, tests_pass where
    they hold the same text (surrounding spaces aside), else tests_fail: the usual shape of math
    and QA results (a model's answer beside the reference). `per_builder` [(MODEL, file)]: one
    table of outputs per builder, instead of `outputs`."""
    problems = Problems()
    try:
        return _convert(problems, outputs, table_format, dict(column_map or {}),
                        dict(value_maps or {}), builder, builder_family, reviews,
                        dict(review_column_map or {}), families, run_name, copy_format,
                        default_condition, abstain_scoring, truth_equals, list(per_builder))
    except ConversionError:
        raise
    except RecursionError:
        problems.add(_name_of(outputs), "nested too deeply to read")
    except MemoryError:
        problems.add(_name_of(outputs), "too large to read")
    problems.raise_if_any()
    raise ConversionError([f"{_name_of(outputs)}: could not be read"])


def _name_of(outputs: Source | None) -> str:
    return outputs.name if outputs is not None else "outputs"


def _check_options(problems, table_format, builder, builder_family, column_map, copy_format,
                   default_condition, abstain_scoring, value_maps):
    if table_format not in ("jsonl", "csv"):
        problems.add("--from", f'"{table_format}" is not jsonl or csv')
    if copy_format not in COPY_FORMATS:
        problems.add("--format", f'"{copy_format}" is not one of {", ".join(COPY_FORMATS)}')
    if not LABEL.match(default_condition or ""):
        problems.add("--default-condition", f'"{default_condition}" is not a label')
    if abstain_scoring not in ABSTAIN_SCORINGS:
        problems.add("--abstain-scoring", f'"{abstain_scoring}" is not one of '
                     f'{", ".join(ABSTAIN_SCORINGS)}')
    if builder is not None and not builder.strip():
        problems.add("--builder", "empty")
    if builder_family is not None and builder is None:
        problems.add("--builder-family", "goes with --builder (the family of that constant "
                     "builder)")
    if builder is not None and "builder" in column_map:
        problems.add("--builder", f'the outputs\' builder is mapped to column '
                     f'"{column_map["builder"]}" and given as a constant: give one')
    for field_name in value_maps:
        if field_name not in VALUE_MAP_FIELDS:
            problems.add("--values", f'"{field_name}" has no value map')


def _convert(problems, outputs, table_format, column_map, value_maps, builder, builder_family,
             reviews, review_column_map, families, run_name, copy_format, default_condition,
             abstain_scoring, truth_equals, per_builder) -> Imported:
    _check_options(problems, table_format, builder, builder_family, column_map, copy_format,
                   default_condition, abstain_scoring, value_maps)
    if truth_equals and "truth" in column_map:
        problems.add("--truth-equals", f'the truth is mapped to column "{column_map["truth"]}" '
                     "and derived from two columns: give one")
    # One table of every builder's outputs, or one table per builder (a model's outputs in its
    # own file, as most eval scripts write them), each read with its model as the builder.
    groups = [(outputs, builder)]
    if per_builder:
        if outputs is not None or builder is not None or "builder" in column_map:
            problems.add("--outputs-per-builder", "names each file's builder: give no other "
                         "table of outputs, constant builder or builder column with it")
        groups = [(source, model.strip()) for model, source in per_builder]
        models = [model for _, model in groups]
        for model in sorted({m for m in models if models.count(m) > 1 or not m}):
            problems.add("--outputs-per-builder", f'"{model}": each file needs its own model')
    skipped: Counter[str] = Counter()

    tasks: dict[str, dict] = {}
    task_lines: dict[str, dict[str, int]] = {}
    builders: dict[str, dict] = {}
    copies: list[dict] = []
    copy_ids: dict[str, int] = {}
    by_task_builder: dict[tuple[str, str], tuple[str, int]] = {}
    places: dict[str, str] = {}  # Imported.places
    for outputs, builder in groups:
        rows, columns = _read(outputs, table_format, problems)
        if truth_equals and columns is not None:
            for column in truth_equals:
                if column not in columns:
                    problems.add(place(outputs), f'no column "{column}" (named by '
                                 f'--truth-equals); the columns are: '
                                 f'{", ".join(sorted(columns)) or "none"}')
        required = ("task", "content") if builder is not None else ("task", "content", "builder")
        cols = _Columns(outputs, column_map, OUTPUT_TARGETS, required, columns, rows, table_format,
                        problems)
        if builder is not None:
            cols.of.pop("builder", None)  # a same-named column yields to the host's constant
        for row in rows:
            task_text = cols.get(row, "task", required=True)
            content = cols.get(row, "content", required=True)
            model = builder.strip() if builder is not None else cols.get(row, "builder", True)
            if truth_equals:
                truth = _equal_cells(outputs, row, truth_equals, problems)
            else:
                truth = cols.mapped(row, "truth", value_maps, lambda v: v in COPY_TRUTHS,
                                    required=False)
            copy_id = cols.get(row, "copy", required=True)
            statement = cols.get(row, "statement", required=True)
            title, cluster = cols.get(row, "title"), cols.get(row, "cluster")
            defect = cols.get(row, "defect")
            if task_text is not None and not task_text.strip():
                problems.add(place(outputs, row.line, cols.of["task"]), "empty")
                task_text = None
            if model is not None and not model.strip():
                problems.add(place(outputs, row.line, cols.of.get("builder", "builder")), "empty")
                model = None
            if copy_id is not None and not copy_id.strip():
                problems.add(place(outputs, row.line, cols.of["copy"]), "empty")
                copy_id = None
            if task_text is None or content is None or model is None:
                continue
            model = model.strip()
            task_id = _task_id(task_text)
            statement = task_text if "statement" not in cols.of else statement
            if statement is None:
                continue
            if not statement.strip():
                problems.add(place(outputs, row.line, cols.of.get("statement", cols.of["task"])),
                             "empty statement")
                continue
            task = tasks.get(task_id)
            if task is None:
                at = f"tasks[{len(tasks)}]"
                places[at] = place(outputs, row.line)
                for key in ("statement", "title", "cluster"):
                    places[f"{at}.{key}"] = place(outputs, row.line,
                                                  cols.of.get(key, cols.of["task"]))
                task = tasks[task_id] = {"id": task_id, "statement": statement, "format": "text"}
                task_lines[task_id] = {}
                for key, value in (("title", title), ("cluster", cluster)):
                    if value and value.strip():
                        task[key] = value
                        task_lines[task_id][key] = row.line
                task_lines[task_id]["statement"] = row.line
            else:
                _same_for_task(problems, outputs, row, cols, task, task_lines[task_id],
                               {"statement": statement, "title": title, "cluster": cluster})
            if model not in builders:
                family = builder_family.strip() if builder_family else families.of(model)
                builders[model] = {"id": model, "model": model, "family": family}
            key = (task_id, model)
            if copy_id is None:
                if key in by_task_builder:
                    problems.add(place(outputs, row.line), f'task "{_short(task_id)}" built by '
                                 f'{model} again (line {by_task_builder[key][1]}): give each row a '
                                 "copy id (map copy=COLUMN)")
                    continue
                copy_id = f"{task_id} / {model}"
            copy_id = copy_id.strip()
            if copy_id in copy_ids:
                problems.add(place(outputs, row.line, cols.of.get("copy", "copy")),
                             f'copy id "{_short(copy_id)}" again (line {copy_ids[copy_id]})')
                continue
            copy_ids[copy_id] = row.line
            by_task_builder.setdefault(key, (copy_id, row.line))
            copy = {"id": copy_id, "task": task_id, "builder": model, "format": copy_format,
                    "content": content, "truth": truth or "unknown"}
            if defect and defect.strip():
                if truth_class(copy["truth"]) == "good":
                    skipped["defect note on a good copy (dropped)"] += 1
                else:
                    copy["defect"] = defect
            at = f"copies[{len(copies)}]"
            places[at] = place(outputs, row.line)
            for key in ("content", "defect", "copy"):
                if key in cols.of:
                    places[f"{at}.{'id' if key == 'copy' else key}"] = place(outputs, row.line,
                                                                              cols.of[key])
            copies.append(copy)
        if not rows and not problems:
            problems.add(place(outputs), "no rows")

    reviewers: dict[str, dict] = {}
    review_list: list[dict] = []
    if reviews is not None:
        _reviews(problems, reviews, table_format, review_column_map, value_maps, families,
                 default_condition, copy_ids, by_task_builder, builders, reviewers, review_list,
                 places)
    elif review_column_map:
        problems.add("--review-map", "given without a reviews file")
    families.check(problems)
    problems.raise_if_any()

    bundle = {
        "format": FORMAT_2,
        # The file's own name: a path as typed on the host's machine stays out of the report.
        "run": {"name": (run_name or "").strip() or _base_name(groups[0][0].name),
                "default_condition": default_condition, "abstain_scoring": abstain_scoring},
        "tasks": list(tasks.values()),
        "builders": list(builders.values()),
        "copies": copies,
    }
    if reviewers:
        bundle["reviewers"] = list(reviewers.values())
        bundle["reviews"] = review_list
    return Imported(bundle=bundle, summary=_summary(bundle, skipped), places=places)


def _base_name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _equal_cells(source: Source, row: _Row, columns: tuple[str, str], problems: Problems) -> str:
    """tests_pass where the row's two columns hold the same text, tests_fail where they differ
    or the answer is empty (no answer is a wrong one, as an empty patch is unresolved), unknown
    where the reference is empty or missing (nothing to compare with)."""
    values = []
    for column in columns:
        value = row.cells.get(column)
        if isinstance(value, _Unreadable):
            problems.add(place(source, row.line, column), value.problem)
            return "unknown"
        values.append((value or "").strip())
    answer, reference = values
    if not reference:
        return "unknown"
    return "tests_pass" if answer == reference else "tests_fail"


def _same_for_task(problems, source, row, cols, task, lines, values) -> None:
    """A task's statement, title and cluster are the task's: every row of it must agree."""
    for key, value in values.items():
        if value is None or not value.strip():
            continue
        if key not in task:
            task[key] = value
            lines[key] = row.line
        elif task[key] != value:
            column = cols.of.get(key, cols.of["task"])
            problems.add(place(source, row.line, column), f'{key} of task '
                         f'"{_short(task["id"])}" differs from line {lines[key]}')


def _reviews(problems, source, table_format, column_map, value_maps, families,
             default_condition, copy_ids, by_task_builder, builders, reviewers, out,
             places) -> None:
    rows, columns = _read(source, table_format, problems)
    names_copy = {"copy", "task"} & (set(column_map) | (columns or set()))
    if columns is not None and not names_copy:
        problems.add(place(source), "no column names the reviewed copy: map copy=COLUMN (the "
                     "outputs' copy id) or task=COLUMN (with builder=COLUMN when the outputs "
                     "have more than one builder)")
    cols = _Columns(source, column_map, REVIEW_TARGETS, ("reviewer", "verdict"), columns, rows,
                    table_format, problems)
    by_copy = "copy" in cols.of
    single_builder = next(iter(builders)) if len(builders) == 1 else None
    if not by_copy and "task" in cols.of and "builder" not in cols.of and not single_builder \
            and builders:
        problems.add(place(source), "reviews name a task but no builder, and the outputs have "
                     f"{len(builders)} builders: map builder=COLUMN too, or copy=COLUMN")
    seen: dict[tuple[str, str, str], int] = {}
    for row in rows:
        model = cols.get(row, "reviewer", required=True)
        verdict = cols.mapped(row, "verdict", value_maps, lambda v: v in VERDICTS, True)
        condition = cols.mapped(row, "condition", value_maps, LABEL.match, False)
        reason = cols.get(row, "reason")
        family_cell = cols.get(row, "reviewer_family")
        copy_id = _review_copy(problems, source, row, cols, by_copy, single_builder, copy_ids,
                               by_task_builder)
        if model is not None and not model.strip():
            problems.add(place(source, row.line, cols.of["reviewer"]), "empty")
            model = None
        if model is None or verdict is None or copy_id is None:
            continue
        model = model.strip()
        condition = condition or default_condition
        if model not in reviewers:
            family = family_cell.strip() if family_cell and family_cell.strip() \
                else families.of(model)
            reviewers[model] = {"id": model, "model": model, "family": family}
        key = (model, copy_id, condition)
        if key in seen:
            problems.add(place(source, row.line), f'{model} reviewed copy "{_short(copy_id)}" '
                         f'under {condition} already (line {seen[key]})')
            continue
        seen[key] = row.line
        review = {"reviewer": model, "copy": copy_id, "condition": condition,
                  "verdict": verdict}
        if reason:
            review["reason"] = reason
        places[f"reviews[{len(out)}]"] = place(source, row.line)
        if "reason" in cols.of:
            places[f"reviews[{len(out)}].reason"] = place(source, row.line, cols.of["reason"])
        out.append(review)
    if not rows and not problems:
        problems.add(place(source), "no rows")


def _review_copy(problems, source, row, cols, by_copy, single_builder, copy_ids,
                 by_task_builder) -> str | None:
    if by_copy:
        copy_id = cols.get(row, "copy", required=True)
        if copy_id is None:
            return None
        if copy_id.strip() not in copy_ids:
            problems.add(place(source, row.line, cols.of["copy"]), f'no copy "{_short(copy_id)}" '
                         "in the outputs")
            return None
        return copy_id.strip()
    if "task" not in cols.of:
        return None
    task_text = cols.get(row, "task", required=True)
    model = cols.get(row, "builder", required=True) if "builder" in cols.of else single_builder
    if task_text is None or model is None:
        return None
    found = by_task_builder.get((_task_id(task_text), model.strip()))
    if found is None:
        problems.add(place(source, row.line, cols.of["task"]), f'no copy of task '
                     f'"{_short(task_text)}" by {model.strip()} in the outputs')
        return None
    return found[0]


def _summary(bundle: dict, skipped: Counter) -> dict:
    reviewers = {r["id"]: r["model"] for r in bundle.get("reviewers", [])}
    reviews: Counter[str] = Counter()
    abstentions: Counter[str] = Counter()
    for review in bundle.get("reviews", []):
        key = f'{reviewers[review["reviewer"]]} / {review["condition"]}'
        reviews[key] += 1
        if review["verdict"] == "abstain":
            abstentions[key] += 1
    return {
        "tasks": len(bundle["tasks"]),
        "builders": dict(Counter(c["builder"] for c in bundle["copies"])),
        "copies_by_truth": dict(Counter(c["truth"] for c in bundle["copies"])),
        "reviews": dict(reviews),
        "abstentions": dict(abstentions),
        "skipped": dict(skipped),
    }
