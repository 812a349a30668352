"""inspect-ai logs built in memory to cost a converter what issue 25 item 2 found (never committed
as files): small `.eval` zips whose samples name one attachment thousands of times, and a large
log that is legal; and Zstandard zip bombs (issue 27 item 1), members as inspect-ai writes them
today (zip method 93). Used by tests/content/test_import_inspect.py,
tests/judging/test_import_limits.py and bench/worst_case.py `inputs`.
"""

import io
import json
import random
import string
import zipfile

from backports.zstd import zipfile as zstd_zipfile

TASK = "bomb"
MODEL = "openai/gpt-4o-mini"
_ALPHABET = string.ascii_letters + " "
_LETTERS = bytes(ord(_ALPHABET[byte % len(_ALPHABET)]) for byte in range(256))


def _header(task: str = TASK, model: str = MODEL) -> dict:
    return {"version": 2, "status": "success",
            "eval": {"task": task, "model": model, "scorers": [{"name": "match"}]}}


def _attachment_text(chars: int, seed: int = 1) -> str:
    """Text that deflate cannot shrink much (letters drawn at random), so the log stays as large
    as the attachment: what made the issue's log 75 KB for a 100 KB attachment."""
    return random.Random(seed).randbytes(chars).translate(_LETTERS).decode("ascii")


def _sample(sample_id: int, messages: int, attachment: str) -> dict:
    return {"id": sample_id, "epoch": 1,
            "input": [{"role": "user", "content": "attachment://big"}] * messages,
            "target": "C",
            "output": {"completion": "an answer"},
            "scores": {"match": {"value": "C"}},
            "attachments": {"big": attachment}}


def eval_log(samples: list[dict], task: str = TASK, model: str = MODEL) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps(_header(task, model)))
        for sample in samples:
            zf.writestr(f"samples/{sample['id']}_epoch_1.json", json.dumps(sample))
    return buffer.getvalue()


def attachment_bomb(samples: int = 1, messages: int = 10_000, attachment_kb: int = 100) -> bytes:
    """A `.eval` log whose every sample's input is `messages` messages each naming one
    `attachment_kb` KB attachment: one sample of 10,000 messages is the issue's 75 KB log that
    asked for a gigabyte."""
    attachment = _attachment_text(attachment_kb * 1000)
    return eval_log([_sample(i, messages, attachment) for i in range(1, samples + 1)])


def large_legal_log(samples: int = 2_000, statement_kb: int = 4, task: str = "large",
                    model: str = MODEL) -> bytes:
    """A `.eval` log of many ordinary samples (a statement of `statement_kb` KB each, given
    through an attachment as inspect stores long texts): large, and every byte of it importable."""
    rows = []
    for i in range(1, samples + 1):
        text = _attachment_text(statement_kb * 1000, seed=i)
        sample = _sample(i, 1, text)
        sample["output"] = {"completion": f"answer {i}"}
        sample["scores"] = {"match": {"value": "C" if i % 3 else "I"}}
        rows.append(sample)
    return eval_log(rows, task=task, model=model)


def zstd_bomb(megabytes: int, noise_per_mb: int = 0) -> bytes:
    """A `.eval` log of Zstandard members whose one sample expands to `megabytes` MiB: spaces
    inside a JSON string (about 32,000:1, zstd's most), or with `noise_per_mb` random letters in
    each MiB to bring its ratio down (900: about 1,770:1, under the importer's zstd ratio, so that
    only the byte caps stop it). Written in pieces, so building it costs little memory."""
    rng = random.Random(1)
    buffer = io.BytesIO()
    with zstd_zipfile.ZipFile(buffer, "w", zstd_zipfile.ZIP_ZSTANDARD) as zf:
        zf.writestr("header.json", json.dumps(_header()))
        with zf.open("samples/1_epoch_1.json", "w", force_zip64=True) as member:
            member.write(b'{"id": 1, "epoch": 1, "input": "')
            for _ in range(megabytes):
                noise = rng.randbytes(noise_per_mb).translate(_LETTERS)
                member.write(noise + b" " * (1024 * 1024 - noise_per_mb))
            member.write(b'", "output": {"completion": "x"}, "scores": {"match": {"value": "C"}}}')
        # An ordinary sample beside it: the log is refused for the bomb alone.
        zf.writestr("samples/2_epoch_1.json", json.dumps(_sample(2, 1, "a statement")))
    return buffer.getvalue()
