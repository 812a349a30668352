"""The review table's rows, drawn in Python since issue 32 (judge.pages._review_row_html), are
byte for byte what the template's loop drew, escaping included."""

import pytest
from django.template import engines

from judge.pages import _review_row_html

# The loop as templates/judge/review.html had it before issue 32.
TEMPLATE_LOOP = """{% for row in rows %}<tr{% if not row.answered %} class="unanswered"{% endif %}>
    <td>{{ row.position }}</td>
    <td><a class="code" href="{{ row.url }}">{{ row.code }}</a></td>
    <td>{{ row.verdict_label }}</td>
    <td>{{ row.reason_start|default:"—" }}</td>
    <td>{% if row.check %}<strong class="check">answered in 0 s — check</strong>{% elif row.seconds_spent is not None %}{{ row.seconds_spent|floatformat:"0" }} s{% else %}—{% endif %}</td>
  </tr>{% endfor %}"""  # noqa: E501 - the template's own lines

ROWS = [
    {"code": "K7Q2", "position": 1, "answered": True, "url": "/s/a/i/K7Q2/", "verdict_label": "Pass",
     "reason_start": "fine", "seconds_spent": 12.5, "check": False},
    {"code": "A&B", "position": 2, "answered": True, "url": "/s/a/i/A%26B/?x=1&y=<2>",
     "verdict_label": "Keep (Fail)", "reason_start": '<script>alert("x")</script> & \'q\'',
     "seconds_spent": 0.4, "check": True},
    {"code": "Z9", "position": 3, "answered": False, "url": "/s/a/i/Z9/",
     "verdict_label": "No verdict yet", "reason_start": "", "seconds_spent": None, "check": False},
    {"code": "M1", "position": 1234, "answered": True, "url": "/s/a/i/M1/", "verdict_label": "Fail",
     "reason_start": "", "seconds_spent": 43199.5, "check": False},
    {"code": "M2", "position": 5, "answered": True, "url": "/s/a/i/M2/", "verdict_label": "Fail",
     "reason_start": "a", "seconds_spent": 2.5, "check": False},
]


@pytest.mark.pure
@pytest.mark.parametrize("row", ROWS, ids=lambda row: row["code"])
def test_a_row_is_what_the_template_drew(row):
    drawn = engines["django"].from_string(TEMPLATE_LOOP).render({"rows": [row]})
    assert _review_row_html(row) == drawn


@pytest.mark.pure
def test_times_are_rounded_as_floatformat_rounds_them():
    template = engines["django"].from_string(TEMPLATE_LOOP)
    for seconds in (0, 1, 1.5, 2.5, 3.49999, 999.5, 1000, 12345.678, 43200, 0.999, 7.0000001):
        row = {**ROWS[0], "seconds_spent": seconds}
        assert _review_row_html(row) == template.render({"rows": [row]}), seconds
