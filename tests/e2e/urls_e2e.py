"""Test-only URLconf: the product's URLs plus deliberately unsafe pages for the detectors'
positive controls (docs/threats.md: every detector must be shown to fire before its silence counts).

Served only by the end-to-end server process (DJANGO_SETTINGS_MODULE=tests.e2e.settings_e2e);
it lives under tests/ and never ships.
"""

from csp.decorators import csp_exempt
from django.http import HttpResponse
from django.urls import path
from django.views.decorators.clickjacking import xframe_options_sameorigin

from blindjudge.urls import handler400, handler403, handler404, handler500  # noqa: F401 - the product's error answers
from blindjudge.urls import urlpatterns as product_urlpatterns
from content.rendering import FRAME_CSP, frame_document
from judging.demo import HOSTILE_MARKDOWN

BEACON = "http://beacon.example.invalid"

# No CSP, no sandbox, no escaping: a beacon and a script in the page and in a child frame.
UNSAFE_PAGE = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>unsafe</title></head>
<body><h1>Deliberately unsafe test page</h1>
<img src="{BEACON}/page.gif" alt="">
<script>alert("unsafe page ran a script")</script>
<script>throw new Error("unsafe page threw")</script>
<iframe title="unsafe frame" srcdoc="&lt;img src='{BEACON}/frame.gif'&gt;
  &lt;script&gt;alert('unsafe frame ran a script')&lt;/script&gt;">
</iframe>
</body></html>"""


def _html(body: str) -> HttpResponse:
    return HttpResponse(body, content_type="text/html; charset=utf-8")


@csp_exempt()
def unsafe_page(request):
    return _html(UNSAFE_PAGE)


@csp_exempt()
@xframe_options_sameorigin
def raw_copy(request):
    """The demo's hostile copy served raw, unescaped, as a product bug would serve it. With
    `?csp=product` it carries the product's frame CSP (so the browser must refuse its loads)."""
    response = _html(frame_document(HOSTILE_MARKDOWN))
    if request.GET.get("csp") == "product":
        response["Content-Security-Policy"] = FRAME_CSP
    return response


def framing_page(sandbox: str, src: str):
    """A page (under the product's own CSP: no inline script) holding one frame."""
    def view(request):
        return _html(f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>frame</title>'
                     f'</head><body><iframe {sandbox} src="{src}" title="raw copy"></iframe></body></html>')
    return view


urlpatterns = [
    path("__e2e__/unsafe/", unsafe_page),
    path("__e2e__/raw-copy/", raw_copy),
    # The sandbox attribute alone: scripts stop, but loads still leave (docs/stack.md).
    path("__e2e__/sandbox-only/", framing_page("sandbox", "/__e2e__/raw-copy/")),
    # A frame allowed to run scripts: alert() is suppressed (no allow-modals), so a dialog
    # detector is blind there; only the console shows it. The product frame never allows scripts.
    path("__e2e__/sandbox-allow-scripts/", framing_page('sandbox="allow-scripts"', "/__e2e__/raw-copy/")),
    # The product's recipe around a raw copy: sandbox attribute and the frame CSP.
    path("__e2e__/sandbox-and-csp/", framing_page("sandbox", "/__e2e__/raw-copy/?csp=product")),
    *product_urlpatterns,
]
