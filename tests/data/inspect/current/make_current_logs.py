"""Makes tests/data/inspect/current/: real inspect-ai logs as inspect-ai writes them today
(every member Zstandard, zip method 93), one per mock model, and the first of them converted by
inspect-ai's own converter to the chunked sample layout (`inspect log convert-chunked`).

Run with inspect-ai installed in a throwaway virtual environment (never the product's):

    python3 -m venv /tmp/inspect-venv && /tmp/inspect-venv/bin/pip install inspect-ai
    /tmp/inspect-venv/bin/python tests/data/inspect/current/make_current_logs.py OUT_DIR

No network: the models are inspect's built-in `mockllm` answering from the tables below. Each
sample is scored by `match` (the truth) and by `model_graded_fact` graded by the evaluated model
itself (no grader role given), so the grader is named only by the model events of the scorer's
span, as in tests/data/inspect's security-guide log.
"""

import glob
import re
import sys

from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.log._recorders.chunked import convert_eval_logs_to_chunked
from inspect_ai.model import ChatMessageUser, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match, model_graded_fact
from inspect_ai.solver import generate

QUESTIONS = [
    ("What is 2 + 3?", "5"),
    ("What is 7 * 6?", "42"),
    ("What is 10 - 4?", "6"),
    # Over 100 characters, and given as a chat message: the chunked layout keeps it in the
    # sample's attachments sequence, the shell referring to it as attachment://0.
    ("A farmer has 9 sheep and buys 9 more at the market on Tuesday. How many sheep does the "
     "farmer have now? Answer with the number.", "18"),
]
# What each mock model answers, by question: alpha always right, beta wrong on two.
ANSWERS = {"alpha": ["5", "42", "6", "18"], "beta": ["5", "41", "6", "19"]}


@task
def arithmetic():
    return Task(dataset=[Sample(input=[ChatMessageUser(content=q)] if len(q) > 100 else q,
                                target=t, id=i)
                         for i, (q, t) in enumerate(QUESTIONS, start=1)],
                solver=generate(), scorer=[match(), model_graded_fact()])


def model(name):
    def answer(messages, tools, tool_choice, config):
        prompt = messages[-1].text
        if "[Submission]:" in prompt:  # model_graded_fact's grading prompt
            expert = re.search(r"\[Expert\]: (\S+)", prompt).group(1)
            submitted = re.search(r"\[Submission\]: The answer is (\S+)", prompt).group(1)
            content = f"The submission says {submitted}.\nGRADE: " + \
                ("C" if submitted == expert else "I")
        else:
            index = [q for q, _ in QUESTIONS].index(prompt)
            content = f"The answer is {ANSWERS[name][index]}"
        output = ModelOutput.from_content(model=f"mockllm/{name}", content=content)
        # Usage given, so mockllm does not count tokens with tiktoken (which downloads its
        # encoding: no network here).
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return output
    return get_model(f"mockllm/{name}", custom_outputs=answer)


if __name__ == "__main__":
    out = sys.argv[1]
    eval(arithmetic(), model=[model("alpha"), model("beta")], log_dir=out, log_format="eval",
         display="none")
    first = sorted(glob.glob(f"{out}/*.eval"))[0]
    convert_eval_logs_to_chunked(first, f"{out}/chunked")
