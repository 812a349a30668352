"""Pure pieces: decision-rule parsing, draws, codes, canonical JSON."""

import pytest

from content.canonical import canonical_json, canonical_sha256
from content.draws import (
    GUEST_CODE_ALPHABET,
    ITEM_CODE_ALPHABET,
    Draws,
    balanced_pick,
    canonical_guest_code,
    draw_item_codes,
    draw_order,
    new_guest_code,
    order_key,
)
from content.rules import RulesError, parse_rules

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

# The metrics naming a reviewer, a condition or a builder (issue 14), listed after the pooled ones.
SELECTOR_METRICS = ("reviewer_recall, reviewer_tnr, condition_delta_flag_rate, condition_mcnemar_p, "
                    "self_preference_delta, builder_pass_rate, builder_difference, "
                    "builder_difference_p_holm")


def test_a_preregistration_without_rules_has_none():
    assert parse_rules("We predict nothing in particular.") == []


def test_rules_are_parsed_from_the_fenced_block():
    text = ('Text first.\r\n\r\n```rules\r\n[{"name": "herding", "metric": "delta_fleiss_kappa", '
            '"op": ">=", "threshold": 0.1, "and": {"metric": "delta_recall", "op": "<=", '
            '"threshold": 0}}]\r\n```\r\n')
    assert parse_rules(text) == [{
        "name": "herding", "metric": "delta_fleiss_kappa", "op": ">=", "threshold": 0.1,
        "and": {"metric": "delta_recall", "op": "<=", "threshold": 0}}]


# A pairs session's pooled metrics, after the per-copy ones (content.rules.PAIRS_METRICS).
PAIRS_METRICS = ("pairwise_accuracy_phase1, pairwise_accuracy_phase2, decisive_accuracy_phase1, "
                 "decisive_accuracy_phase2, position_bias, ")


@pytest.mark.parametrize("block, errors", [
    ('[{"name": "a", "metric": "accuracy", "op": ">", "threshold": 1}]',
     ['rules[0].metric: unknown metric "accuracy"; known: delta_fleiss_kappa, delta_recall, '
      'delta_tnr, recall_phase1, tnr_phase1, recall_phase2, tnr_phase2, shift_towards_truth, '
      'shift_away_from_truth, ' + PAIRS_METRICS + SELECTOR_METRICS]),
    ('[{"name": "a", "metric": "delta_tnr", "op": "=>", "threshold": 1}]',
     ['rules[0].op: unknown operator "=>"; known: >= > <= < == !=']),
    ('[{"name": "a", "metric": "delta_tnr", "op": ">", "threshold": "high"}]',
     ["rules[0].threshold: expected a finite number"]),
    ('[{"name": "a", "metric": "delta_tnr", "op": ">", "threshold": 1, '
     '"and": {"metric": "x", "op": ">", "threshold": 1}}]',
     ['rules[0].and.metric: unknown metric "x"; known: delta_fleiss_kappa, delta_recall, '
      'delta_tnr, recall_phase1, tnr_phase1, recall_phase2, tnr_phase2, shift_towards_truth, '
      'shift_away_from_truth, ' + PAIRS_METRICS + SELECTOR_METRICS]),
    ('[{"metric": "delta_tnr", "op": ">", "threshold": 1, "why": 2}]',
     ['rules[0]: unknown field "why"', "rules[0].name: a rule needs a non-empty name"]),
    ('[{"name": "a", "metric": "delta_tnr", "op": ">", "threshold": 1}, '
     '{"name": "a", "metric": "delta_tnr", "op": "<", "threshold": 1}]',
     ['rules[1].name: duplicate rule name "a"']),
    ('{"name": "a"}', ["rules: expected a JSON list of rules"]),
    ('[{"name": "a",', ["rules: malformed JSON at line 2 column 1: Expecting property name "
                        "enclosed in double quotes"]),
])
def test_bad_rules_are_refused_with_every_problem_named(block, errors):
    with pytest.raises(RulesError) as error:
        parse_rules(f"Prereg.\n```rules\n{block}\n```\n")
    assert error.value.errors == errors


def test_pinned_draws_repeat_and_unpinned_draws_do_not():
    pinned = Draws("11" * 32)
    assert pinned.hex("a") == Draws("11" * 32).hex("a")
    assert pinned.hex("a") != pinned.hex("b")
    assert Draws().hex("a") != Draws().hex("a")
    assert len(Draws().bytes("x", 100)) == 100 and len(pinned.bytes("x", 100)) == 100


def test_symbols_are_uniform_over_the_alphabet():
    drawn = Draws("22" * 32).symbols("x", ITEM_CODE_ALPHABET, 25_000)
    counts = [drawn.count(symbol) for symbol in ITEM_CODE_ALPHABET]
    assert set(drawn) == set(ITEM_CODE_ALPHABET)
    assert max(counts) < 1.2 * 1000 and min(counts) > 0.8 * 1000


def test_item_codes_are_distinct_and_unambiguous():
    codes = draw_item_codes(Draws(), "judge:1:codes", 2000)
    assert len(set(codes)) == 2000
    assert not set("".join(codes)) & set("0O1IL2Z5S8B")


def test_the_order_is_the_hmac_sort_and_stable():
    seed = "ab" * 32
    keys = [f"c{i}" for i in range(20)]
    order = draw_order(seed, keys)
    assert sorted(order) == sorted(keys)
    assert order == sorted(keys, key=lambda k: order_key(seed, k))
    assert draw_order(seed, list(reversed(keys))) == order
    # Known answer, from `printf c1 | openssl dgst -sha256 -mac HMAC -macopt hexkey:00…00`:
    # any implementation of the order must reproduce it.
    assert order_key("00" * 32, "c1") == (
        "5e11d7122bc86d164a569d475e5e2425b318b6b326844c0051c92e9da88db3d8")


def test_balanced_pick_prefers_the_least_judged_items():
    keys = ["a", "b", "c", "d"]
    assert balanced_pick(keys, {"a": 2, "b": 1, "c": 1, "d": 2}, 2, "00" * 32, 1) in (
        ["b", "c"], ["c", "b"])
    assert balanced_pick(keys, {}, 4, "00" * 32, 1) == keys


def test_guest_codes_carry_65_bits_and_forgive_typing():
    code = new_guest_code(Draws(), "guest")
    raw = code.replace("-", "")
    assert len(raw) == 13 and set(raw) <= set(GUEST_CODE_ALPHABET)
    assert [len(group) for group in code.split("-")] == [4, 4, 4, 1]
    assert canonical_guest_code(code.lower()) == code
    assert canonical_guest_code(" kx7p 2qmf-9rtd  4 ") == "KX7P-2QMF-9RTD-4"
    assert canonical_guest_code("O1IL-U") == "0111-V"


def test_canonical_json_sorts_keys_normalises_text_and_is_compact():
    # "é" as e + combining accent becomes the single NFC code point; CRLF becomes LF.
    assert canonical_json({"b": "e\u0301\r\nx", "a": [1, 2.5, None, True]}) == (
        '{"a":[1,2.5,null,true],"b":"\u00e9\\nx"}'.encode())
    assert canonical_sha256({"a": 1, "b": 2}) == canonical_sha256({"b": 2, "a": 1})
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})
