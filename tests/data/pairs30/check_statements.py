"""The check of pairs30's dataset rows against the public file (tests/data/README.md, "pairs30",
"The dataset rows"): index file id 60230950369, read only through the stored-file reader and
searched with its exact-string search. M holds, per instance, where that search found the start
(`-<number>",\n    "problem_statement": "` and the statement's first characters) and the end (the
statement's last characters and `",\n    "public_fields"`) of its JSON literal; the literal's
length between them must be `json.dumps` of the committed statement's. Past the index's first
100,000 characters, the file's tail from 10908's start is rebuilt whole and its length compared.

    python3 tests/data/pairs30/check_statements.py MINI_GIT_DIR   (run from the repository root)
"""

import json
import subprocess
import sys

MINI_GIT = sys.argv[1] if len(sys.argv) > 1 else ""
# (start match, end match) of each statement's literal in index file 60230950369, from find_string
M = {
 "django__django-10097": (18451, 21180), "astropy__astropy-7166": (17819, 17989),
 "django__django-10554": (21647, 24676), "django__django-11099": (26647, 27434),
 "django__django-11119": (27892, 28273), "django__django-11133": (28727, 29773),
 "django__django-11163": (30230, 30660), "django__django-11299": (31118, 34381),
 "django__django-12143": (34836, 36311), "django__django-12708": (36768, 37749),
 "django__django-13449": (39171, 45956), "matplotlib__matplotlib-13989": (46426, 48249),
 "matplotlib__matplotlib-24026": (51261, 53497), "matplotlib__matplotlib-24627": (53972, 54385),
 "mwaskom__seaborn-3069": (54853, 56073), "mwaskom__seaborn-3187": (56542, 58054),
 "pallets__flask-5014": (58515, 58720), "psf__requests-1921": (60039, 60776),
 "psf__requests-2317": (61231, 62125), "pydata__xarray-2905": (62587, 64880),
 "pydata__xarray-3095": (65338, 68283), "pydata__xarray-4356": (72175, 72930),
 "pydata__xarray-4966": (73395, 77941), "pydata__xarray-7233": (80526, 82456),
 "pylint-dev__pylint-4970": (84226, 84866), "pytest-dev__pytest-10051": (85337, 86797),
 "pytest-dev__pytest-10356": (87262, 92799), "pytest-dev__pytest-5631": (93268, 95668),
 "scikit-learn__scikit-learn-10297": (96147, 97745),
}
DATASET = "tests/data/pairs30/dataset.jsonl"
ROWS = {json.loads(line)["instance_id"]: json.loads(line) for line in open(DATASET)}
MINI = "swebench_results/20251118_gemini-3-pro-74pct"
PROMPT = "<pr_description>\nConsider the following PR description:\n"
# The rows after 10908 in the public file, as the reader showed them: base_commit, created_at,
# declared_mode, instance_id, FAIL_TO_PASS_count, PASS_TO_PASS_count, hints_text_available, repo,
# version (scikit-learn-25232 is not kept here; its statement is cut from its trajectory).
TAIL = [
    ("3aefc834dce72e850bff48689bea3c7dff5f3fad", "2019-03-23T09:46:59Z", "semantic_api",
     "scikit-learn__scikit-learn-13496", 67, 1323, True, "scikit-learn/scikit-learn", "0.21"),
    ("f7eea978097085a6781a0e92fc14ba7712a52d75", "2022-12-24T15:32:44Z", "numeric_symbolic",
     "scikit-learn__scikit-learn-25232", 83, 20170, True, "scikit-learn/scikit-learn", "1.3"),
    ("e886ce4e1444c61b865e7839c9cff5464ee20ace", "2023-04-17T16:33:08Z", "test_localizable",
     "scikit-learn__scikit-learn-26194", 162, 17434, False, "scikit-learn/scikit-learn", "1.3"),
    ("f35d2a6cc726f97d0e859ca7a0e1729f7da8a6c8", "2022-07-16T19:29:29Z", "repo_family",
     "sphinx-doc__sphinx-10673", 57, 550, False, "sphinx-doc/sphinx", "5.2"),
    ("9988d5ce267bf0df4791770b469431b1fb00dcdd", "2020-05-30T06:41:07Z", "semantic_api",
     "sphinx-doc__sphinx-7748", 180, 852, True, "sphinx-doc/sphinx", "3.1"),
    ("3ea1ec84cc610f7a9f4f6b354e264565254923ff", "2020-11-22T16:54:19Z", "test_localizable",
     "sphinx-doc__sphinx-8475", 64, 1135, False, "sphinx-doc/sphinx", "3.4"),
    ("360290c4c401e386db60723ddb0109ed499c9f6e", "2016-09-15T20:01:58Z", "numeric_symbolic",
     "sympy__sympy-11618", 20, 69, False, "sympy/sympy", "1.0"),
    ("d7c3045115693e887bcd03599b7ca4650ac5f2cb", "2017-01-25T13:40:24Z", "numeric_symbolic",
     "sympy__sympy-12096", 20, 838, True, "sympy/sympy", "1.0"),
]
SUFFIX = '",\n    "public_fields"'


def statement(instance_id: str) -> str:
    if instance_id in ROWS:
        return ROWS[instance_id]["problem_statement"]
    path = f"HEAD:{MINI}/trajs/{instance_id}/{instance_id}.traj.json"
    traj = json.loads(subprocess.run(["git", "--git-dir", MINI_GIT, "show", path],  # noqa: S607
                                     capture_output=True, check=True).stdout)
    text = traj["messages"][1]["content"]
    return text[len(PROMPT):text.index("\n</pr_description>")]


def row(base, created, mode, instance_id, f2p, p2p, hints, repo, version) -> dict:
    return {"base_commit": base, "created_at": created, "declared_mode": mode, "hints_text": None,
            "instance_id": instance_id, "problem_statement": statement(instance_id),
            "public_fields": {"FAIL_TO_PASS_count": f2p, "PASS_TO_PASS_count": p2p,
                              "hints_text_available": hints, "hints_text_included": False},
            "repo": repo, "version": version}


def main() -> None:
    for instance_id, (start, end) in M.items():
        literal = json.dumps(ROWS[instance_id]["problem_statement"])
        prefix = f'-{instance_id.rpartition("-")[2]}",\n    "problem_statement": "'
        tail = literal[-1 - (50 - len(SUFFIX)):-1]
        assert (end + len(tail)) - (start + len(prefix)) == len(literal) - 2, instance_id
    print("per-statement length checks:", len(M))
    # From 10908's start to the end of the file (112,163 characters); its base_commit is 40
    # characters whatever they are.
    first = row("x" * 40, "2018-04-03T03:50:46Z", "repo_family", "scikit-learn__scikit-learn-10908",
                69, 3864, True, "scikit-learn/scikit-learn", "0.20")
    text = (json.dumps([first, *(row(*fields) for fields in TAIL)], indent=2)
            + "\n\nReturn only JSON matching the provided schema.\n")
    rebuilt = len(text) - text.index('-10908",\n    "problem_statement": "')
    print("tail from 10908's start: rebuilt", rebuilt, "file", 112163 - 98226)
    assert rebuilt == 112163 - 98226


if __name__ == "__main__":
    main()
