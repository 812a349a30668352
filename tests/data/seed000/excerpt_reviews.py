"""How tests/data/seed000/reviews-v1.jsonl was made from the article's results/reviews-v1.jsonl
(1.2 MB): the same 1,620 records in the same order, each keeping model, revision, item, task,
label, condition and verdict, and leaving out the reply text, device and outputTokens.

    python tests/data/seed000/excerpt_reviews.py ORIGINAL/reviews-v1.jsonl > reviews-v1.jsonl
"""

import json
import sys

KEPT = ("model", "revision", "item", "task", "label", "condition", "verdict")

with open(sys.argv[1], encoding="utf-8") as original:
    for line in original:
        if line.strip():
            record = json.loads(line)
            print(json.dumps({key: record[key] for key in KEPT}))
