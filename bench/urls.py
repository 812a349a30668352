"""The product's URLs plus the baselines every real request is compared with, never shipped in
the product's URLs:

- /bench/hello: the same server, settings and middleware, no database and no template;
- two floors under the judging loop's prefix (/s/, so they take turns as a judge's requests do,
  blindjudge/request_threads.py), each a judge request with everything but one part taken away:
  `statement` runs one trivial statement (a database connection taken and handed back, no browser
  session read); `admitted` is the judge guard alone (the browser session read, the judge row),
  answered with a line of text — what every judge request must do before its own work. A judge
  request can serve no more than its floor's requests per second (bench/README.md, "The floors").
"""

from django.db import connection
from django.http import HttpResponse
from django.urls import path

from accounts.guards import judge_required
from blindjudge.urls import urlpatterns as product_urlpatterns


def hello(request):
    return HttpResponse("Hello, world", content_type="text/plain")


def statement(request, url_id):
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        (one,) = cursor.fetchone()
    return HttpResponse(f"statement {one}", content_type="text/plain")


@judge_required
def admitted(request, url_id):
    return HttpResponse(f"admitted {request.judge.pseudonym}", content_type="text/plain")


urlpatterns = [
    path("bench/hello", hello),
    path("s/<str:url_id>/bench/statement", statement),
    path("s/<str:url_id>/bench/admitted", admitted),
    *product_urlpatterns,
]
