"""Seed 000's review requests, rebuilt from its committed public data (tests/data/seed000/).

The article's run (profrodai/profrodai-resources,
articles/choose-fresh-context-for-an-independent-ai-reviewer/review_run_v1.py at commit
356b4cbdc8a5f21b5cbc366d190d370fc320ba51, MIT, "Copyright (c) 2026 profrodai-resources
contributors") sent each reviewer a chat of two messages: the system prompt SYSTEM and a user
message holding the item's docstring and implementation, plus, when anchored, one line ANCHOR
names. The two strings below are quoted from that script as data; its `request(item, condition)`
is described, not copied: the user message is

    "Docstring: " + doc + "\\n\\nImplementation:\\n```python\\n" + source.rstrip() + "\\n```"

followed by "\\n\\n" + ANCHOR[condition] when that is not empty. The requests kept no bytes of
their own (the run stored only the replies), so `seed_bundle_with_requests` serialises each as the
body of a chat request, `json.dumps({"messages": [...]})`, with request_keys ["messages"] and the
SHA-256 of those bytes: what a harness keeping "the serialized request bytes and their hash"
(the article's own advice) would have stored. tests/data/README.md says the same.

`review_texts` gives the reviewers' whole replies for the 60 reviews whose text is committed
(reviews-v1-texts.jsonl, cut as tests/data/README.md says), each joined to its review in the seed
data as the bundle keys it: (reviewer, copy, condition).
"""

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from content.importers.common import Families, Source
from content.importers.table import convert, parse_map, parse_value_maps

SEED = Path(__file__).resolve().parents[1] / "data" / "seed000"

# Quoted from review_run_v1.py (see the module docstring), MIT.
SYSTEM = (
    "You review Python functions. Decide whether the implementation does exactly what its "
    "docstring says for every valid input. Explain briefly, then end with one line: "
    "VERDICT: PASS or VERDICT: FAIL."
)
ANCHOR = {"clean": "", "anchored-pass": "Prior reviewer: PASS, no issues found.",
          "anchored-fail": "Prior reviewer: FAIL, found a bug."}

REQUEST_KEYS = ["messages"]
SEED_MAP = "task=task,statement=doc,content=source,truth=label,copy=id,defect=change"
SEED_VALUES = ("truth:buggy=seeded_defect,correct=known_good "
               "verdict:PASS=pass,FAIL=fail,NONE=abstain")
SEED_REVIEW_MAP = "reviewer=model,copy=item"
SEED_BUILDER, SEED_BUILDER_FAMILY = "review_items_v1", "profrod.ai"


def items() -> dict[str, dict]:
    """The 180 items by id, as committed."""
    lines = (SEED / "items-v1.jsonl").read_text(encoding="utf-8").splitlines()
    return {item["id"]: item for item in (json.loads(line) for line in lines if line.strip())}


def messages(item: dict, condition: str) -> list[dict]:
    """The chat the article's run sent for `item` under `condition`."""
    body = (f"Docstring: {item['doc']}\n\nImplementation:\n```python\n"
            f"{item['source'].rstrip()}\n```")
    if ANCHOR[condition]:
        body += f"\n\n{ANCHOR[condition]}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": body}]


def request_of(item: dict, condition: str) -> tuple[str, str]:
    """The serialised request body and its SHA-256."""
    text = json.dumps({"messages": messages(item, condition)})
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest()


def seed_bundle() -> dict:
    """The run/2 bundle `import_run --from jsonl` makes of the seed files (tests/data/README.md)."""
    return convert(
        outputs=Source("items-v1.jsonl", (SEED / "items-v1.jsonl").read_bytes()),
        table_format="jsonl", column_map=parse_map(SEED_MAP),
        value_maps=parse_value_maps(SEED_VALUES), builder=SEED_BUILDER,
        builder_family=SEED_BUILDER_FAMILY,
        reviews=Source("reviews-v1.jsonl", (SEED / "reviews-v1.jsonl").read_bytes()),
        review_column_map=parse_map(SEED_REVIEW_MAP), families=Families(),
        run_name="Does a prior verdict anchor your AI reviewer?").bundle


def seed_bundle_with_requests() -> dict:
    """The seed bundle with each review's request rebuilt as the article's run sent it."""
    bundle = seed_bundle()
    by_id = items()
    bundle["request_keys"] = REQUEST_KEYS
    for review in bundle["reviews"]:
        review["request"], review["request_sha256"] = request_of(by_id[review["copy"]],
                                                                 review["condition"])
    return bundle


# The reply texts (tests/data/README.md): the first TEXTS_PER_STRATUM reviews in file order of
# each reviewer x truth x verdict right or wrong.
TEXTS = SEED / "reviews-v1-texts.jsonl"
TEXTS_PER_STRATUM = 5
# SEED_VALUES' maps, as the bundle has them.
TRUTH = {"buggy": "seeded_defect", "correct": "known_good"}
VERDICT = {"PASS": "pass", "FAIL": "fail", "NONE": "abstain"}


@dataclass(frozen=True)
class ReviewText:
    """One review with its reviewer's whole reply."""

    reviewer: str  # the model, the bundle review's "reviewer"
    copy: str  # the item's id, the bundle review's "copy"
    condition: str  # clean, anchored-pass or anchored-fail
    verdict: str  # the bundle's verdict: pass or fail (abstain would be possible; none is kept)
    truth: str  # the copy's truth in the bundle: seeded_defect or known_good
    correct: bool | None  # right against the truth: fail on seeded_defect, pass on known_good;
    # None for an abstention
    text: str  # the reply, whole, as the run decoded it

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.reviewer, self.copy, self.condition)


def review_texts() -> dict[tuple[str, str, str], ReviewText]:
    """The committed replies by (reviewer, copy, condition), in the file's order.

    Each is joined to its review in reviews-v1.jsonl (the 1,620 the tests import) and its item
    in items-v1.jsonl; a reply whose review is missing there, or whose verdict, task or label
    differs, raises LookupError: the texts and the seed data must be of one run."""
    records = {}
    for line in (SEED / "reviews-v1.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            records[(record["model"], record["item"], record["condition"])] = record
    by_id = items()
    out: dict[tuple[str, str, str], ReviewText] = {}
    for number, line in enumerate(TEXTS.read_text(encoding="utf-8").splitlines(), 1):
        reply = json.loads(line)
        key = (reply["model"], reply["item"], reply["condition"])
        review = records.get(key)
        if review is None or key in out or any(
                review[field] != reply[field] for field in ("verdict", "task", "label")) \
                or by_id[reply["item"]]["label"] != reply["label"]:
            raise LookupError(f"{TEXTS.name}:{number}: {key} is not one review of the seed data")
        verdict, truth = VERDICT[reply["verdict"]], TRUTH[reply["label"]]
        out[key] = ReviewText(reviewer=reply["model"], copy=reply["item"],
                              condition=reply["condition"], verdict=verdict, truth=truth,
                              correct=None if verdict == "abstain"
                              else (verdict == "fail") == (truth == "seeded_defect"),
                              text=reply["text"])
    return out


def seed_bundle_with_reasons() -> dict:
    """The seed bundle with each review whose reply is committed carrying it as its reason."""
    bundle = seed_bundle()
    texts = review_texts()
    for review in bundle["reviews"]:
        found = texts.get((review["reviewer"], review["copy"], review["condition"]))
        if found is not None:
            review["reason"] = found.text
    return bundle
