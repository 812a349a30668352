"""The canonical forms every published hash is taken over (content/canonical.py): RFC 8785 (JCS)
against the RFC's own vectors, and the legacy form that sessions frozen before it still verify in.

Vectors: RFC 8785 Appendix B (numbers, by their IEEE 754 bits), section 3.2.2 (the sample object)
and section 3.2.3 (sorting, with a key outside the Basic Multilingual Plane)."""

import hashlib
import json
import struct

import pytest

from content.canonical import (
    CURRENT,
    FORMS,
    JCS,
    LEGACY,
    canonical_json,
    canonical_sha256,
    form_named,
    form_of,
    jcs,
    legacy_json,
)
from content.commitments import commitment_payload, commitment_sha256

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

# RFC 8785 Appendix B: the IEEE 754 double (big-endian hex) and its JCS form; None: not
# representable (NaN, Infinity).
APPENDIX_B = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),  # minus zero
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("7fffffffffffffff", None),
    ("7ff0000000000000", None),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]

# RFC 8785 section 3.2.2: the sample input, as JSON text, and its canonical form.
SAMPLE_INPUT = r'''{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}'''
SAMPLE_OUTPUT = ('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
                 '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}')

# RFC 8785 section 3.2.3: keys sorted by UTF-16 code units, so the emoji (a surrogate pair,
# D83D DE00) sorts before U+FB33, though its code point (U+1F600) is larger.
SORTING_INPUT = {
    "\u20ac": "Euro Sign",
    "\r": "Carriage Return",
    "\ufb33": "Hebrew Letter Dalet With Dagesh",
    "1": "One",
    "\U0001f600": "Emoji: Grinning Face",
    "\u0080": "Control",
    "\u00f6": "Latin Small Letter O With Diaeresis",
}
SORTING_ORDER = ["Carriage Return", "One", "Control", "Latin Small Letter O With Diaeresis",
                 "Euro Sign", "Emoji: Grinning Face", "Hebrew Letter Dalet With Dagesh"]


def double(hex_ieee: str) -> float:
    return struct.unpack(">d", bytes.fromhex(hex_ieee))[0]


@pytest.mark.parametrize("hex_ieee, expected", APPENDIX_B)
def test_numbers_are_written_as_rfc_8785_appendix_b_writes_them(hex_ieee, expected):
    value = double(hex_ieee)
    if expected is None:
        with pytest.raises(ValueError):
            canonical_json(value)
        return
    assert jcs(value) == expected.encode()
    assert canonical_json([value], JCS) == f"[{expected}]".encode()


def test_the_rfc_8785_sample_object_canonicalises_to_the_rfc_s_bytes():
    assert jcs(json.loads(SAMPLE_INPUT)) == SAMPLE_OUTPUT.encode("utf-8")
    # The text step leaves it as it is: NFC already, its one line ending an LF.
    assert canonical_json(json.loads(SAMPLE_INPUT)) == SAMPLE_OUTPUT.encode("utf-8")


def test_keys_sort_by_utf_16_code_units_as_rfc_8785_section_3_2_3_sorts_them():
    written = jcs(SORTING_INPUT).decode("utf-8")
    assert list(json.loads(written).values()) == SORTING_ORDER
    assert written == (
        '{"\\r":"Carriage Return","1":"One","\u0080":"Control",'
        '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",'
        '"\U0001f600":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}')
    # The legacy form sorted by code point: the emoji came last.
    assert list(json.loads(legacy_json(SORTING_INPUT)).values())[-2:] == [
        "Hebrew Letter Dalet With Dagesh", "Emoji: Grinning Face"]


def test_the_text_step_comes_first_then_rfc_8785():
    # CR becomes LF, and U+FB33 (a composition exclusion) is NFC's U+05D3 U+05BC: the text step
    # changes those two keys, so they sort as what they become.
    written = json.loads(canonical_json(SORTING_INPUT))
    assert list(written) == ["\n", "1", "\u0080", "\u00f6", "\u05d3\u05bc", "\u20ac",
                             "\U0001f600"]
    # Keys the text step leaves alone keep RFC 8785's order: U+1F600 before U+FF01.
    assert canonical_json({"\uff01": 1, "\U0001f600": 2}) == '{"\U0001f600":2,"\uff01":1}'.encode()
    assert canonical_json({"\uff01": 1, "\U0001f600": 2}, LEGACY) == (
        '{"\uff01":1,"\U0001f600":2}'.encode())
    assert canonical_json({"b": "e\u0301\r\nx", "a": "\r"}) == '{"a":"\\n","b":"\u00e9\\nx"}'.encode()


def test_a_decimal_threshold_hashes_as_any_jcs_library_hashes_it():
    # The two examples: 1.0 against 1, 1e-07 against 1e-7.
    assert canonical_json({"threshold": 1.0}) == canonical_json({"threshold": 1}) == (
        b'{"threshold":1}')
    assert canonical_json({"threshold": 1e-07}) == b'{"threshold":1e-7}'
    assert canonical_json({"threshold": 0.0}) == b'{"threshold":0}'
    assert canonical_json({"threshold": 1e21}) == b'{"threshold":1e+21}'
    assert canonical_json({"threshold": 1e20}) == b'{"threshold":100000000000000000000}'
    # The legacy form wrote what Python writes, so the two forms' hashes differ there.
    assert canonical_json({"threshold": 1.0}, LEGACY) == b'{"threshold":1.0}'
    assert canonical_json({"threshold": 1e-07}, LEGACY) == b'{"threshold":1e-07}'
    assert canonical_sha256({"threshold": 1.0}) == hashlib.sha256(b'{"threshold":1}').hexdigest()
    assert canonical_sha256({"threshold": 1.0}) != canonical_sha256({"threshold": 1.0}, LEGACY)


def test_an_integer_beyond_2_53_is_the_double_it_denotes():
    # An I-JSON reader (every JCS library) parses 2**53 + 1 as the double 2**53.
    assert canonical_json([2**53 - 1, 2**53 + 1, 10**20]) == (
        b"[9007199254740991,9007199254740992,100000000000000000000]")
    assert canonical_json([True, False, None]) == b"[true,false,null]"  # booleans stay booleans
    with pytest.raises(ValueError):
        canonical_json(10**400)
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")}, LEGACY)


def test_strings_are_escaped_per_rfc_8785_and_alike_in_both_forms():
    text = "\u0000\u0001\u001f\b\t\n\f\"\\/\u007f\u2028\U0001f600"
    expected = '"\\u0000\\u0001\\u001f\\b\\t\\n\\f\\"\\\\/\u007f\u2028\U0001f600"'.encode()
    assert jcs(text) == legacy_json(text) == expected
    with pytest.raises(ValueError):
        canonical_json("\udead")  # a lone surrogate has no UTF-8


def test_forms_are_named_and_an_object_naming_none_is_legacy():
    assert CURRENT == JCS == "jcs-rfc8785" and LEGACY == "blindjudge-json-1"
    assert set(FORMS) == {JCS, LEGACY}
    assert form_of({"canonical": "jcs-rfc8785"}) == JCS
    assert form_of({"blindjudge_protocol": 2}) == LEGACY
    assert form_named(None) == LEGACY
    with pytest.raises(ValueError, match="unknown canonical form 'jcs'"):
        form_of({"canonical": "jcs"})
    with pytest.raises(ValueError):
        canonical_json({}, "jcs")


ASSIGNMENTS = [{"position": 2, "code": "KQ4T", "item": "c2", "copy": "c2", "builder": "b\U0001f600"},
               {"position": 1, "code": "AC3D", "item": "c1", "copy": "c1", "builder": "b\uff01"}]


def test_a_commitment_names_its_form_from_version_2_and_version_1_is_as_it_was():
    common = {"session_url_id": "s", "pseudonym": "J01", "order_seed": "ab" * 32,
              "salt": "cd" * 32, "assignments": ASSIGNMENTS}
    new = commitment_payload(**common)
    assert (new["commitment"], new["canonical"]) == (2, JCS)
    assert [a["position"] for a in new["assignments"]] == [1, 2]
    old = commitment_payload(**common, canonical=LEGACY)
    assert old["commitment"] == 1 and "canonical" not in old
    assert list(old) == ["commitment", "session", "judge", "order_seed", "salt", "assignments"]
    assert commitment_sha256(**common) == hashlib.sha256(jcs(new)).hexdigest()
    assert commitment_sha256(**common, canonical=LEGACY) == hashlib.sha256(
        json.dumps(old, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()
