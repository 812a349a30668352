"""Make tests/data/pairs30/ from the two public runs it excerpts (tests/data/README.md, "pairs30").

Usage, with the two repositories' git directories (snapshots at the commits the README names):

    python3 tests/data/pairs30/excerpt.py VORFLUX_GIT_DIR MINI_GIT_DIR OUT_DIR

Reads with `git show HEAD:<path>`; standard library only. Writes:
- experiments/evaluation/verified/<run>/all_preds.jsonl: the kept instances' lines, byte for
  byte, in the original's order;
- experiments/evaluation/verified/<run>/results/results.json: each list filtered to the kept
  instances, `json.dumps(indent=2)` without a final newline (the original is exactly that of
  itself, checked here);
- mini/<run>/trajs/preds.json: the kept entries, in the original's order, `json.dumps(indent=2)`
  (likewise checked);
- mini/<run>/trajs/sb-cli-reports/google__gemini-3-pro-preview.<run_id>.json: the sb-cli run
  report with every id list filtered and every count but `total_instances` recomputed,
  `json.dumps(indent=4)` (checked), renamed to the harness's `<model>.<run_id>.json`;
- dataset.jsonl: one row per kept instance (instance_id, repo, problem_statement), the statement
  cut from the instance's mini-swe-agent trajectory (see README), sorted by instance id.
"""

import json
import subprocess
import sys
from pathlib import Path

VORFLUX = "evaluation/verified/20250519_vorflux_opus46-code_gpt55h-review"
MINI = "swebench_results/20251118_gemini-3-pro-74pct"
SBCLI_RUN = "20251118_mini-v1.15.0_gemini-3-pro-preview-20251118"
SBCLI = f"{MINI}/trajs/sb-cli-reports/swe-bench_verified__test__{SBCLI_RUN}.json"
GEMINI = "google/gemini-3-pro-preview"

# The 50 SWE-bench Verified instances whose dataset rows the public file described in the README
# embeds (index file id 60230950369), in its order.
CANDIDATES = """
astropy__astropy-12907 astropy__astropy-13033 astropy__astropy-13236 astropy__astropy-13398
astropy__astropy-7166 django__django-10097 django__django-10554 django__django-10914
django__django-11099 django__django-11119 django__django-11133 django__django-11163
django__django-11299 django__django-12143 django__django-12708 django__django-13212
django__django-13449 matplotlib__matplotlib-13989 matplotlib__matplotlib-20488
matplotlib__matplotlib-24026 matplotlib__matplotlib-24627 mwaskom__seaborn-3069
mwaskom__seaborn-3187 pallets__flask-5014 psf__requests-1142 psf__requests-1921
psf__requests-2317 pydata__xarray-2905 pydata__xarray-3095 pydata__xarray-3677
pydata__xarray-3993 pydata__xarray-4356 pydata__xarray-4966 pydata__xarray-6992
pydata__xarray-7233 pylint-dev__pylint-4551 pylint-dev__pylint-4970 pytest-dev__pytest-10051
pytest-dev__pytest-10356 pytest-dev__pytest-5631 scikit-learn__scikit-learn-10297
scikit-learn__scikit-learn-10908 scikit-learn__scikit-learn-13496
scikit-learn__scikit-learn-25232 scikit-learn__scikit-learn-26194 sphinx-doc__sphinx-10673
sphinx-doc__sphinx-7748 sphinx-doc__sphinx-8475 sympy__sympy-11618 sympy__sympy-12096
""".split()

PLACEHOLDER = "# No patch generated for "
MAX_PATCH = 64 * 1024
KEEP = 40
PROMPT_START = "<pr_description>\nConsider the following PR description:\n"
PROMPT_END = "\n</pr_description>"


def show(git_dir: str, path: str) -> bytes:
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"HEAD:{path}"],  # noqa: S607
                          check=True, capture_output=True).stdout


def statement(mini_git: str, instance_id: str) -> str:
    """The problem statement as mini-swe-agent put it into the first user message."""
    traj = json.loads(show(mini_git, f"{MINI}/trajs/{instance_id}/{instance_id}.traj.json"))
    assert traj["instance_id"] == instance_id
    message = traj["messages"][1]
    assert message["role"] == "user"
    text = message["content"]
    assert text.startswith(PROMPT_START) and text.count(PROMPT_END) == 1
    return text[len(PROMPT_START):text.index(PROMPT_END)]


def repo_of(instance_id: str) -> str:
    """SWE-bench's instance id is `<owner>__<name>-<number>`."""
    owner, _, rest = instance_id.partition("__")
    return f"{owner}/{rest.rpartition('-')[0]}"


def main(vorflux_git: str, mini_git: str, out: str) -> None:
    out_dir = Path(out)
    v_lines = show(vorflux_git, f"{VORFLUX}/all_preds.jsonl").splitlines(keepends=True)
    v_preds = {json.loads(line)["instance_id"]: (line, json.loads(line)) for line in v_lines}
    v_raw = show(vorflux_git, f"{VORFLUX}/results/results.json").decode()
    v_results = json.loads(v_raw)
    assert v_raw == json.dumps(v_results, indent=2)
    g_raw = show(mini_git, f"{MINI}/trajs/preds.json").decode()
    g_preds = json.loads(g_raw)
    assert g_raw == json.dumps(g_preds, indent=2)
    s_raw = show(mini_git, SBCLI).decode()
    sbcli = json.loads(s_raw)
    assert s_raw == json.dumps(sbcli, indent=4)

    # 1. Every builder attempted the instance with a real patch of a keepable size.
    usable = [i for i in CANDIDATES
              if i in v_preds and i in g_preds
              and not v_preds[i][1]["model_patch"].startswith(PLACEHOLDER)
              and 0 < len(g_preds[i]["model_patch"]) <= MAX_PATCH
              and 0 < len(v_preds[i][1]["model_patch"]) <= MAX_PATCH]
    # 2. To KEEP: drop the instances both builders resolved with the largest patches (bytes of
    #    both), so every instance some builder failed stays.
    both = [i for i in usable if i in v_results["resolved"] and i in sbcli["resolved_ids"]]
    size = {i: len(v_preds[i][1]["model_patch"]) + len(g_preds[i]["model_patch"]) for i in both}
    dropped = sorted(both, key=lambda i: (-size[i], i))[:max(0, len(usable) - KEEP)]
    kept = set(usable) - set(dropped)
    print("left out:", [i for i in CANDIDATES if i not in kept])

    run = out_dir / "experiments" / VORFLUX
    (run / "results").mkdir(parents=True, exist_ok=True)
    (run / "all_preds.jsonl").write_bytes(
        b"".join(v_preds[i][0] for i in v_preds if i in kept))
    (run / "results" / "results.json").write_text(json.dumps(
        {k: [i for i in ids if i in kept] for k, ids in v_results.items()}, indent=2))

    mini = out_dir / "mini" / "20251118_gemini-3-pro-74pct" / "trajs"
    (mini / "sb-cli-reports").mkdir(parents=True, exist_ok=True)
    (mini / "preds.json").write_text(json.dumps(
        {i: entry for i, entry in g_preds.items() if i in kept}, indent=2))
    report = {}
    for key, value in sbcli.items():
        report[key] = [i for i in value if i in kept] if isinstance(value, list) else value
    for key in list(report):
        if key.endswith("_instances") and key != "total_instances":
            report[key] = len(report[key.replace("_instances", "_ids")])
    name = f"{GEMINI.replace('/', '__')}.{SBCLI_RUN}.json"
    (mini / "sb-cli-reports" / name).write_text(json.dumps(report, indent=4))

    with open(out_dir / "dataset.jsonl", "w", encoding="utf-8", newline="") as rows:
        for i in sorted(kept):
            rows.write(json.dumps({"instance_id": i, "repo": repo_of(i),
                                   "problem_statement": statement(mini_git, i)}) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:4])
