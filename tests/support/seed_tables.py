"""The seed's tables (tests/data/seed000) as a host types their options on the import page: the
host's import tests and the hour-long benchmark (bench/soak.py) upload them with these."""

SEED_TABLE_FIELDS = {
    "source": "jsonl",
    "column_map": "task=task,statement=doc,content=source,truth=label,copy=id,defect=change",
    "values": "truth:buggy=seeded_defect,correct=known_good verdict:PASS=pass,FAIL=fail,NONE=abstain",
    "builder": "review_items_v1", "builder_family": "profrod.ai",
    "review_map": "reviewer=model,copy=item",
}
