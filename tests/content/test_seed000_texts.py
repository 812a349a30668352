"""The seed article's reply texts (tests/data/seed000/reviews-v1-texts.jsonl, issue 30): the file is
the one tests/data/README.md describes, it is the cut the README states, its texts are the replies
that gave the recorded verdicts, and tests/support/seed000.review_texts joins every one of them to
its review in the seed data as the bundle keys it."""

import hashlib
import json
import re
from collections import Counter

import pytest

from content.bundle import validate_bundle
from tests.support import seed000

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

README = seed000.SEED.parent / "README.md"
KEYS = ["model", "revision", "device", "item", "task", "label", "condition", "verdict",
        "outputTokens", "text"]
MODELS = ["Qwen/Qwen2.5-Coder-1.5B-Instruct", "Qwen/Qwen2.5-Coder-3B-Instruct", "Qwen/Qwen3-1.7B"]
# The article's own verdict rule (review_run_v1.py: the last match, case ignored, else NONE).
VERDICT = re.compile(r"VERDICT:\s*\**\s*(PASS|FAIL)", re.I)


def readme_row() -> str:
    rows = [line for line in README.read_text(encoding="utf-8").splitlines()
            if line.startswith("| `reviews-v1-texts.jsonl`")]
    assert len(rows) == 1
    return rows[0]


def test_the_file_is_the_one_the_readme_describes():
    row = readme_row()
    raw = seed000.TEXTS.read_bytes()
    assert f"`{hashlib.sha256(raw).hexdigest()}`" in row
    lines = raw.decode("utf-8").splitlines()
    assert f"{len(lines)} lines" in row and len(lines) == 60
    assert f"{len(raw):,} bytes" in row
    assert raw.endswith(b"\n") and b"\r" not in raw


def test_every_line_is_an_original_record_unchanged():
    # The run wrote each record with json.dumps' defaults and these keys in this order; a line
    # re-serialised differently would not be the original's.
    for line in seed000.TEXTS.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        assert list(record) == KEYS
        assert json.dumps(record) == line


def test_the_texts_are_the_replies_that_gave_the_recorded_verdicts():
    for line in seed000.TEXTS.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        found = VERDICT.findall(record["text"])
        assert (found[-1].upper() if found else "NONE") == record["verdict"]


def test_the_cut_is_the_first_five_of_each_reviewer_truth_and_verdict_right_or_wrong():
    # Applied here to the metadata excerpt, which holds all 1,620 records in the original's order.
    kept, expected = Counter(), []
    for line in (seed000.SEED / "reviews-v1.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["verdict"] == "NONE":
            continue
        right = (record["verdict"] == "FAIL") == (record["label"] == "buggy")
        stratum = (record["model"], record["label"], right)
        if kept[stratum] < seed000.TEXTS_PER_STRATUM:
            kept[stratum] += 1
            expected.append((record["model"], record["item"], record["condition"]))
    assert len(kept) == 12 and set(kept.values()) == {5}
    assert list(seed000.review_texts()) == expected


def test_the_loader_joins_every_text_to_its_review_in_the_seed_bundle():
    texts = seed000.review_texts()
    bundle = seed000.seed_bundle()
    reviews = {(r["reviewer"], r["copy"], r["condition"]): r for r in bundle["reviews"]}
    truth = {c["id"]: c["truth"] for c in bundle["copies"]}
    assert len(texts) == 60
    for key, found in texts.items():
        assert found.key == key
        assert reviews[key]["verdict"] == found.verdict
        assert truth[found.copy] == found.truth
        assert found.correct == ((found.verdict == "fail") == (found.truth == "seeded_defect"))
        assert found.text.strip()
    strata = Counter((t.reviewer, t.truth, t.correct) for t in texts.values())
    assert strata == {(m, truth, correct): 5 for m in MODELS
                      for truth in ("known_good", "seeded_defect") for correct in (True, False)}


def test_the_loader_refuses_a_text_whose_review_is_not_in_the_seed_data(monkeypatch, tmp_path):
    lines = seed000.TEXTS.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record["verdict"] = "FAIL"  # the seed data has this review as PASS
    damaged = tmp_path / "texts.jsonl"
    damaged.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n", encoding="utf-8")
    monkeypatch.setattr(seed000, "TEXTS", damaged)
    with pytest.raises(LookupError, match=r"texts\.jsonl:1: "):
        seed000.review_texts()


def test_the_seed_bundle_with_reasons_carries_the_60_replies_and_validates():
    bundle = seed000.seed_bundle_with_reasons()
    texts = seed000.review_texts()
    with_reason = {(r["reviewer"], r["copy"], r["condition"]): r["reason"]
                   for r in bundle["reviews"] if r.get("reason")}
    assert with_reason == {key: t.text for key, t in texts.items()}
    validated = validate_bundle(json.dumps(bundle).encode(), max_bundle_bytes=50 * 1024 * 1024,
                                max_copy_bytes=5 * 1024 * 1024)
    assert sum(1 for r in validated.data["reviews"] if r["reason"]) == 60
