"""A judge page's links (judge.pages.judge_links) are the URLs reverse() gives, under any script
prefix, though each is reversed once per process: the parts around the session's URL id and the
item's code are kept, and a value reverse() would quote or refuse still goes to reverse()."""

import pytest
from django.urls import NoReverseMatch, get_script_prefix, reverse, set_script_prefix

from judge.pages import _url_parts, judge_links

URL_ID = "abcdefghijkmnpqrstu234"  # as sessions draw them: 22 of lowercase letters and digits
CODES = ("QA9T", "7JJV", "Ä1", "a b", "x%y", "q?r", "é#")


@pytest.fixture
def script_prefix():
    before = get_script_prefix()
    yield set_script_prefix
    set_script_prefix(before)


def reversed_links(url_id):
    return {"home": reverse("judge_home", kwargs={"url_id": url_id}),
            "instructions": reverse("judge_instructions", kwargs={"url_id": url_id}),
            "review": reverse("judge_lock", kwargs={"url_id": url_id})}


def assert_links_are_reverses(url_id):
    links = judge_links(url_id)
    assert {"home": links.home, "instructions": links.instructions,
            "review": links.review} == reversed_links(url_id)
    for code in CODES:
        assert links.item(code) == reverse("judge_item", kwargs={"url_id": url_id, "code": code})
        assert links.frame(code) == reverse("judge_frame", kwargs={"url_id": url_id, "code": code})


@pytest.mark.parametrize("prefix", ["/", "/under/a path/"])
def test_the_links_are_what_reverse_gives(script_prefix, prefix):
    script_prefix(prefix)
    assert_links_are_reverses(URL_ID)
    assert judge_links(URL_ID).home.startswith(reverse("judge_home", kwargs={"url_id": "x"})[:-2])


def test_each_link_is_reversed_once(script_prefix):
    script_prefix("/once/")
    judge_links(URL_ID)
    before = _url_parts.cache_info()
    links = judge_links("zzzz2345zzzz2345zzzz23")
    links.item("QA9T")
    links.frame("QA9T")
    after = _url_parts.cache_info()
    assert after.misses == before.misses
    assert after.hits == before.hits + 5


def test_an_id_or_code_reverse_would_quote_or_refuse_goes_to_reverse(script_prefix):
    script_prefix("/")
    assert_links_are_reverses("Odd Id")  # quoted by reverse()
    with pytest.raises(NoReverseMatch):
        judge_links("a/b")
    with pytest.raises(NoReverseMatch):
        judge_links(URL_ID).item("")
    with pytest.raises(NoReverseMatch):
        judge_links(URL_ID).frame("a/b")
