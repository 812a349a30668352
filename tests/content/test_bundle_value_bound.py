"""A bundle's JSON values are counted before any is built (issue 25 item 9): 20 MB of empty
objects once cost 1.1 GB before a single check (2.8 GB at 50 MB). Past MAX_JSON_VALUES the
validator refuses at once, saying how many it found, in a process whose address space is limited
far below what the parse would have taken."""

import subprocess
import sys
from pathlib import Path

import pytest

from content.bundle import MAX_JSON_VALUES, BundleError, json_values_at_least, validate_bundle
from tests.worlds import bundle_bytes

pytestmark = pytest.mark.pure

ROOT = Path(__file__).resolve().parents[2]

EMPTY_OBJECTS = """
import resource
resource.setrlimit(resource.RLIMIT_AS, (700 * 2**20, 700 * 2**20))
from content.bundle import BundleError, validate_bundle
raw = b'{"format": "blindjudge.run/1", "run": {"name": "x", "task": "y"}, "builders": [' \\
      + b"{}," * 7_000_000 + b'{}]}'
try:
    validate_bundle(raw, max_bundle_bytes=50 * 2**20, max_copy_bytes=5 * 2**20)
except BundleError as refused:
    print(refused.errors)
"""


@pytest.mark.pure(False)
def test_twenty_megabytes_of_empty_objects_are_refused_before_they_are_built():
    result = subprocess.run([sys.executable, "-c", EMPTY_OBJECTS], capture_output=True, text=True,
                            timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == (
        "['bundle: holds at least 14,000,007 JSON values (objects, arrays, strings, numbers); a "
        f"bundle may hold {MAX_JSON_VALUES:,}: split the run']")


def test_the_count_skips_strings_and_their_escapes():
    assert json_values_at_least(b'{"a": "\\\\", "b": "\\"x,{[", "c": [1, 2]}') == 5
    assert json_values_at_least(b'{"copy": "' + b"a, {[" * 1000 + b'"}') == 1


def test_an_ordinary_bundle_is_far_below_the_bound():
    raw = bundle_bytes()
    assert 0 < json_values_at_least(raw) < 1000 < MAX_JSON_VALUES
    validate_bundle(raw, max_bundle_bytes=2**20, max_copy_bytes=2**20)


def test_just_past_the_bound_is_refused_and_at_it_is_not_refused_for_it():
    def numbers(count):
        return (b'{"format": "blindjudge.run/1", "n": [' + b"0," * (count - 3) + b"0]}")
    assert json_values_at_least(numbers(MAX_JSON_VALUES + 1)) == MAX_JSON_VALUES + 1
    with pytest.raises(BundleError, match="holds at least 4,000,001 JSON values"):
        validate_bundle(numbers(MAX_JSON_VALUES + 1), max_bundle_bytes=2**26, max_copy_bytes=2**20)
    with pytest.raises(BundleError) as other:
        validate_bundle(numbers(MAX_JSON_VALUES), max_bundle_bytes=2**26, max_copy_bytes=2**20)
    assert not any("JSON values" in e for e in other.value.errors)
