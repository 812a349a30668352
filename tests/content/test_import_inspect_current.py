"""content/importers/inspect_logs.py on inspect-ai's logs as it writes them today (issue 27 item
1): every member Zstandard (zip method 93), which Python 3.11's zipfile refused ("header.json:
cannot be read from the zip"), and the chunked sample layout. The logs in
tests/data/inspect/current/ were made here with inspect-ai itself (tests/data/README.md)."""

import io
import json
import subprocess
import sys
import zipfile as stdlib_zipfile
from pathlib import Path

import pytest
from backports import zstd
from backports.zstd import zipfile

from content.importers import inspect_logs
from content.importers.common import ConversionError, Families, Source
from content.importers.inspect_logs import MAX_RATIO, MAX_ZSTD_RATIO, convert
from tests.content.test_import_inspect import valid

pytestmark = pytest.mark.pure

ROOT = Path(__file__).resolve().parents[2]
CURRENT = ROOT / "tests" / "data" / "inspect" / "current"
ALPHA, BETA, BETA_CHUNKED = "arithmetic_alpha.eval", "arithmetic_beta.eval", "arithmetic_beta_chunked.eval"
# mockllm is no organisation's: the host says whose, as for any model the table does not know.
MOCK = {"mockllm/alpha": "Mock Labs", "mockllm/beta": "Mock Labs"}


def real(name: str) -> Source:
    return Source(name, (CURRENT / name).read_bytes())


def run(logs, *, truth_scorer="match", review_scorer="model_graded_fact", **kwargs):
    return convert(logs=logs, truth_scorer=truth_scorer, truth_values=None,
                   review_scorer=review_scorer, families=Families(MOCK), run_name="", **kwargs)


def refused(logs, **kwargs) -> list[str]:
    with pytest.raises(ConversionError) as caught:
        run(logs, **kwargs)
    return caught.value.errors


def members_of(name: str) -> dict[str, bytes]:
    with zipfile.ZipFile(CURRENT / name) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def rezip(name: str, members: dict[str, bytes]) -> Source:
    """The members zipped again with Zstandard, as inspect-ai writes them."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_ZSTANDARD) as zf:
        for member, data in members.items():
            zf.writestr(member, data)
    return Source(name, buffer.getvalue())


# --- Zstandard members -----------------------------------------------------------------------------

def test_the_committed_logs_are_what_inspect_writes_today():
    for name in (ALPHA, BETA, BETA_CHUNKED):
        with zipfile.ZipFile(CURRENT / name) as zf:
            assert {info.compress_type for info in zf.infolist()} == {zipfile.ZIP_ZSTANDARD}
            header = json.loads(zf.read("header.json"))
        assert header["version"] == 2 and header["eval"]["packages"] == {"inspect_ai": "0.3.285"}
    # What Python 3.11's own zipfile (the importer's before) makes of them.
    with stdlib_zipfile.ZipFile(CURRENT / ALPHA) as zf, pytest.raises(NotImplementedError):
        zf.read("header.json")


def test_current_logs_of_two_models_convert_and_validate_like_the_deflated_ones():
    result = run([real(ALPHA), real(BETA)])
    data = valid(result.bundle)
    assert [t["id"] for t in data["tasks"]] == [f"arithmetic#{i}" for i in range(1, 5)]
    assert {b["id"]: b["family"] for b in data["builders"]} == {
        "mockllm/alpha": "Mock Labs", "mockllm/beta": "Mock Labs"}
    by_copy = {c["id"]: (c["content"], c["truth"]) for c in data["copies"]}
    assert by_copy["arithmetic#2/mockllm/beta"] == ("The answer is 41", "tests_fail")
    assert by_copy["arithmetic#4/mockllm/alpha"] == ("The answer is 18", "tests_pass")
    assert result.summary["copies_by_truth"] == {"tests_pass": 6, "tests_fail": 2}
    assert data["tasks"][0]["statement"] == "What is 2 + 3?"
    assert data["tasks"][3]["statement"].startswith("--- user ---\nA farmer has 9 sheep")
    # model_graded_fact graded by the evaluated model itself: named by its scorer span's events.
    assert result.summary["reviews"] == {"mockllm/alpha / clean": 4, "mockllm/beta / clean": 4}
    verdicts = {r["copy"]: r["verdict"] for r in data["reviews"]}
    assert verdicts["arithmetic#2/mockllm/beta"] == "fail"
    assert verdicts["arithmetic#2/mockllm/alpha"] == "pass"


def test_a_zstd_member_compressing_far_harder_than_deflate_may_is_read():
    """An agent re-reading a 40 KB file it edits: zstd's window holds every copy (437:1, deflate
    6:1), past the ratio deflate's members are held to, and read."""
    members = members_of(ALPHA)
    sample = json.loads(members["samples/1_epoch_1.json"])
    text = " ".join(f"line {i % 977} of the module under test" for i in range(1200))
    sample["output"]["completion"] = "".join(f"{text}\n--- run {i}: passed ---\n"
                                             for i in range(100))
    members["samples/1_epoch_1.json"] = raw = json.dumps(sample).encode()
    source = rezip(ALPHA, members)
    with zipfile.ZipFile(io.BytesIO(source.data)) as zf:
        ratio = len(raw) / zf.getinfo("samples/1_epoch_1.json").compress_size
    assert MAX_RATIO < ratio < MAX_ZSTD_RATIO, ratio
    result = run([source, real(BETA)])
    assert result.bundle["copies"][0]["content"] == sample["output"]["completion"]


class _Frames:
    """What inspect-ai writes for a member past 200 MiB (inspect_ai/_util/zipfile.py): a new zstd
    frame every `size` bytes of input (here 1,000, so a small member has several)."""

    def __init__(self, size: int = 1000):
        self.size, self.taken, self.frame = size, 0, zstd.ZstdCompressor()

    def compress(self, data: bytes) -> bytes:
        out = []
        while data:
            piece, data = data[:self.size - self.taken], data[self.size - self.taken:]
            out.append(self.frame.compress(piece))
            self.taken += len(piece)
            if self.taken == self.size:
                out.append(self.frame.flush())
                self.frame, self.taken = zstd.ZstdCompressor(), 0
        return b"".join(out)

    def flush(self) -> bytes:
        return self.frame.flush() if self.taken else b""


def test_a_member_of_several_zstd_frames_is_read_whole(monkeypatch):
    members = members_of(ALPHA)
    monkeypatch.setattr(zipfile, "_get_compressor", lambda *args: _Frames())
    several = rezip(ALPHA, members)
    monkeypatch.undo()
    with zipfile.ZipFile(io.BytesIO(several.data)) as zf, pytest.raises(zipfile.BadZipFile):
        zf.read("samples/1_epoch_1.json")  # the zipfile alone stops at the first frame's end
    assert run([several, real(BETA)]).bundle == run([real(ALPHA), real(BETA)]).bundle


def test_a_damaged_zstd_member_is_refused_by_name():
    raw = bytearray(real(ALPHA).data)
    with zipfile.ZipFile(io.BytesIO(bytes(raw))) as zf:
        info = zf.getinfo("samples/2_epoch_1.json")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    raw[start + 40:start + 60] = b"\xff" * 20
    errors = refused([Source(ALPHA, bytes(raw)), real(BETA)], review_scorer=None)
    assert errors[0].startswith(f"{ALPHA}:samples/2_epoch_1.json: cannot be read from the zip: ")


# --- Zstandard bombs -------------------------------------------------------------------------------

ZSTD_BOMB = """
import resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (900 * 2**20, 900 * 2**20))
from content.importers.common import ConversionError, Families, Source
from content.importers.inspect_logs import convert
from tests.support.hostile_logs import zstd_bomb
megabytes, noise = int(sys.argv[1]), int(sys.argv[2])
raw = zstd_bomb(megabytes, noise)
started = time.perf_counter()
try:
    convert(logs=[Source("bomb.eval", raw)], truth_scorer=None, truth_values=None,
            review_scorer=None, families=Families(), run_name="")
    print("converted")
except ConversionError as refused:
    print("\\n".join(refused.errors))
with open("/proc/self/status") as status:  # VmHWM: see test_import_inspect.py's ATTACHMENT_BOMB
    peak = int(next(line.split()[1] for line in status if line.startswith("VmHWM:"))) // 1024
print(len(raw), round(time.perf_counter() - started, 2), peak, sep="\\t", file=sys.stderr)
"""


def zstd_bomb(megabytes: int, noise: int) -> tuple[list[str], int, float, int]:
    """(the refusal's lines, the log's bytes, the conversion's seconds, the process's peak RSS in
    MB) for a zstd bomb of `megabytes` MiB, converted in a process of its own limited to 900 MB."""
    result = subprocess.run([sys.executable, "-c", ZSTD_BOMB, str(megabytes), str(noise)],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    size, seconds, peak = result.stderr.strip().splitlines()[-1].split("\t")
    return result.stdout.splitlines(), int(size), float(seconds), int(peak)


@pytest.mark.pure(False)
def test_a_zstd_bomb_is_refused_at_its_ratio_in_little_memory():
    """1 GiB of spaces in a 33 KB log (32,000:1): refused once it has given 2,000 bytes per
    compressed byte, 64 MB, never inflated whole."""
    lines, size, seconds, peak = zstd_bomb(1024, 0)
    assert lines == [f"bomb.eval:samples/1_epoch_1.json: compressed more than {MAX_ZSTD_RATIO}:1; "
                     "refused as a possible zip bomb"]
    assert size < 40_000
    assert seconds < 10 and peak < 250, (seconds, peak)


@pytest.mark.pure(False)
def test_a_zstd_bomb_under_the_ratio_stops_at_the_member_cap():
    """512 MiB at about 1,470:1, under the zstd ratio: read no further than the member's cap
    (256 MiB), in at most that much memory and a little more."""
    lines, size, seconds, peak = zstd_bomb(512, 900)
    cap = inspect_logs.MAX_MEMBER_BYTES
    assert lines == [f"bomb.eval:samples/1_epoch_1.json: more than {cap:,} bytes uncompressed; "
                     "refused (a log member this large is not read)"]
    assert size * MAX_ZSTD_RATIO > 512 * 2**20  # under the ratio: only the cap stops it
    assert seconds < 20 and peak < cap // 2**20 + 150, (seconds, peak)


# --- the chunked sample layout ----------------------------------------------------------------------

def test_the_chunked_log_is_inspects_own_conversion_of_a_one_member_log():
    names = set(members_of(BETA_CHUNKED))
    assert "samples/4_epoch_1/sample.json" in names and "samples/4_epoch_1/attachments/0.json" in names
    assert not any(name.startswith("samples/") and name.count("/") == 1 for name in names)
    shell = json.loads(members_of(BETA_CHUNKED)["samples/4_epoch_1/sample.json"])
    assert shell["input"][0]["content"] == "attachment://0"  # the statement is an attachment


def test_a_chunked_log_converts_exactly_as_its_one_member_original():
    chunked = run([real(ALPHA), real(BETA_CHUNKED)])
    original = run([real(ALPHA), real(BETA)])
    assert valid(chunked.bundle) and chunked.bundle == original.bundle
    assert chunked.summary == original.summary
    assert chunked.places["copies[7]"] == f"{BETA_CHUNKED}:samples/4_epoch_1/sample.json"
    beta4 = next(c for c in chunked.bundle["copies"] if c["id"] == "arithmetic#4/mockllm/beta")
    assert beta4 == {"id": "arithmetic#4/mockllm/beta", "task": "arithmetic#4",
                     "builder": "mockllm/beta", "format": "text", "content": "The answer is 19",
                     "truth": "tests_fail"}


def test_a_chunked_samples_grader_is_read_from_its_events_sequence():
    """Without the grading messages in the shell's score, the grader is the model of the model
    event inside the scorer's span, in the sample's events chunks."""
    members = members_of(BETA_CHUNKED)
    for member in [m for m in members if m.endswith("/sample.json")]:
        shell = json.loads(members[member])
        shell["scores"]["model_graded_fact"].pop("metadata")
        members[member] = json.dumps(shell).encode()
    result = run([rezip(BETA_CHUNKED, members)])
    assert result.summary["reviews"] == {"mockllm/beta / clean": 4}
    without = {m: b for m, b in members.items() if "/events/" not in m}
    errors = refused([rezip(BETA_CHUNKED, without)])
    assert len(errors) == 1 and "does not name the grader model of 4 samples" in errors[0]


def test_a_samples_folder_without_its_shell_is_refused_in_one_line():
    """A layout this importer does not know (here: the chunked one without its sample.json) is one
    refusal for the log, never one confusing error per member."""
    members = {m: b for m, b in members_of(BETA_CHUNKED).items() if not m.endswith("/sample.json")}
    errors = refused([rezip(BETA_CHUNKED, members)])
    assert errors == [
        f"{BETA_CHUNKED}: 28 members under samples/ in a layout this importer does not read (the "
        "first: samples/1_epoch_1/attachments/0.json): neither a sample of its own "
        "(samples/<id>_epoch_<n>.json) nor a chunked sample's folder with its sample.json; "
        "nothing of this log was read"]


def test_a_log_mixing_both_layouts_reads_each_sample_by_its_own():
    members = members_of(BETA_CHUNKED)
    one_member = members_of(BETA)
    for member in [m for m in members if m.startswith("samples/2_epoch_1/")]:
        del members[member]
    members["samples/2_epoch_1.json"] = one_member["samples/2_epoch_1.json"]
    mixed = run([real(ALPHA), rezip(BETA_CHUNKED, members)])
    assert mixed.bundle == run([real(ALPHA), real(BETA)]).bundle


def test_a_broken_chunk_is_refused_by_its_own_member():
    members = members_of(BETA_CHUNKED)
    members["samples/4_epoch_1/attachments/0.json"] = b'["A farmer'
    members["samples/3_epoch_1/events/0.json"] = b'{"not": "a list"}'
    errors = refused([rezip(BETA_CHUNKED, members)])
    assert errors == [
        f"{BETA_CHUNKED}:samples/3_epoch_1/events/0.json: expected a JSON list (of events)",
        f"{BETA_CHUNKED}:samples/4_epoch_1/attachments/0.json:1: not JSON: Unterminated string "
        "starting at (column 2)"]
