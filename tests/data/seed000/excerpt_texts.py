"""How tests/data/seed000/reviews-v1-texts.jsonl was cut from the article's results/reviews-v1.jsonl
(1,175,147 characters, 1,620 records): the first five reviews in file order of each reviewer
model x truth label x verdict right or wrong (FAIL on a buggy item and PASS on a correct one are
right; NONE, no verdict, is neither and is left out): 3 x 2 x 2 strata, 60 lines, each the
original's line unchanged (reply text, device and outputTokens kept), in the original's order.

    python tests/data/seed000/excerpt_texts.py ORIGINAL/reviews-v1.jsonl > reviews-v1-texts.jsonl
"""

import json
import sys
from collections import Counter

PER_STRATUM = 5
RIGHT = {("buggy", "FAIL"), ("correct", "PASS")}

kept: Counter = Counter()
with open(sys.argv[1], encoding="utf-8") as original:
    for line in original:
        if not line.strip():
            continue
        record = json.loads(line)
        if record["verdict"] == "NONE":
            continue
        stratum = (record["model"], record["label"], (record["label"], record["verdict"]) in RIGHT)
        if kept[stratum] < PER_STRATUM:
            kept[stratum] += 1
            sys.stdout.write(line if line.endswith("\n") else line + "\n")
