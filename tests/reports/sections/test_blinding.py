"""reports.sections.blinding on hand-made data: the redactions made in what judges read, per
builder (content.blinding.redactions_shown: a judged copy once, its judged findings' texts, and
in a copies session the reviewers' reasons of phase 2 and defect notes on scorecards; nothing of
a copy no judge saw), and the layout features found in one builder's judged copies only."""

import pytest

from content.blinding import SHAPE_FEATURES
from reports.sections.blinding import redactions_per_builder, shapes_of_one_builder_section
from tests.reports.sections.arrays import (
    a_session,
    builder,
    bundle,
    copy,
    finding,
    item,
    report_data,
    review,
    reviewer,
    task,
)

pytestmark = pytest.mark.pure

T = task("t1")
B1, B2, B3 = (builder("b1", "gpt-4o", "OpenAI"), builder("b2", "claude", "Anthropic"),
              builder("b3", "gemini", "Google"))


def test_redactions_are_counted_per_builder_in_what_judges_saw():
    c1 = copy("c1", T, B1, "known_good", content="import openai\nclient = OpenAI()\n")
    c2 = copy("c2", T, B2, "known_good",
              content="def f():\n    return 1  # by Claude\n\nSigned-off-by: Claude <c@example.com>\n")
    c3 = copy("c3", T, B1, "known_good", content="# OpenAI OpenAI openai\n")  # judged by no one
    b = bundle(tasks=[T], builders=[B1, B2, B3], copies=[c1, c2, c3])
    data = report_data(b, items=[item(c1), item(c2)],
                       session=a_session(redaction_patterns=["OpenAI", "Claude"]))
    # c1: "openai" and "OpenAI" (case-insensitive) -> 2. c2: "Claude" in the comment -> 1; the
    # trailer line is metadata, stripped before redaction, so its "Claude" is not counted. c3 was
    # never judged; b3 has no copy: 0, listed all the same.
    assert redactions_per_builder(data) == {"b1": 2, "b2": 1, "b3": 0}


def test_a_findings_session_counts_each_judged_copy_once_and_its_judged_findings_texts():
    c1 = copy("c1", T, B1, "seeded_defect", content="OpenAI " * 5, defect="an OpenAI defect")
    f1 = finding("f1", c1, "real", text="The OpenAI client is never closed.")
    f2 = finding("f2", c1, "false_alarm", text="Nothing to redact here.")
    r1 = reviewer("r1", "qwen", "Alibaba")
    reason = review(r1, c1, "fail", reason="OpenAI style")
    b = bundle(tasks=[T], builders=[B1, B2], copies=[c1], findings=[f1, f2], reviewers=[r1],
               reviews=[reason])
    data = report_data(b, items=[item(c1, finding_=f1), item(c1, finding_=f2)],
                       session=a_session(kind="findings", redaction_patterns=["OpenAI"],
                                         scorecards=True))
    # The copy's frame beside both findings, once: 5; f1's text: 1; f2's: 0. A findings session
    # shows no reviewers' reasons and no defect notes.
    assert redactions_per_builder(data) == {"b1": 6, "b2": 0}


def test_a_copies_session_counts_the_reasons_judges_read_and_defect_notes_on_scorecards():
    c1 = copy("c1", T, B1, "seeded_defect", content="x = 1\n", defect="an OpenAI defect")
    c2 = copy("c2", T, B2, "known_good", content="y = 2\n")
    r1 = reviewer("r1", "qwen", "Alibaba")
    reviews = [review(r1, c1, "fail", reason="OpenAI style, OpenAI names"),
               review(r1, c2, "pass", reason="reads like OpenAI"),
               # Another condition's reason is never shown to judges.
               review(r1, c2, "pass", condition="told_pass", reason="OpenAI again")]
    b = bundle(tasks=[T], builders=[B1, B2], copies=[c1, c2], reviewers=[r1], reviews=reviews)
    for scorecards, expected in ((False, {"b1": 2, "b2": 1}), (True, {"b1": 3, "b2": 1})):
        data = report_data(b, items=[item(c1), item(c2)],
                           session=a_session(redaction_patterns=["OpenAI"], scorecards=scorecards))
        assert redactions_per_builder(data) == expected


def test_no_pattern_redacts_nothing():
    c1 = copy("c1", T, B1, "known_good", content="import openai\n")
    data = report_data(bundle(tasks=[T], builders=[B1], copies=[c1]), items=[item(c1)])
    assert redactions_per_builder(data) == {"b1": 0}


def test_a_shape_found_in_one_builder_s_judged_copies_only_is_flagged():
    c1 = copy("c1", T, B1, "known_good", content="x = 1\r\ny = 2\r\n")
    c2 = copy("c2", T, B1, "known_good", content="x = 1\n")
    c3 = copy("c3", T, B2, "known_good", content="x = 1\n")
    # Trailing spaces in b2's copy c4, which no judge saw: not a shape judges could tell by.
    c4 = copy("c4", T, B2, "known_good", content="x = 1   \n")
    b = bundle(tasks=[T], builders=[B1, B2], copies=[c1, c2, c3, c4])
    data = report_data(b, items=[item(c1), item(c2), item(c3)])
    words, stripped = SHAPE_FEATURES["crlf"]
    assert shapes_of_one_builder_section(data) == [
        {"feature": "crlf", "words": words, "stripped": stripped, "builder": "b1", "copies": 1, "of": 2}]


def test_a_shape_every_builder_has_or_a_single_builder_flags_nothing():
    c1 = copy("c1", T, B1, "known_good", content="x = 1\r\n")
    c2 = copy("c2", T, B2, "known_good", content="y = 2\r\n")
    both = report_data(bundle(tasks=[T], builders=[B1, B2], copies=[c1, c2]), items=[item(c1), item(c2)])
    assert shapes_of_one_builder_section(both) == []
    one = report_data(bundle(tasks=[T], builders=[B1, B2], copies=[c1, c2]), items=[item(c1)])
    assert shapes_of_one_builder_section(one) == []
