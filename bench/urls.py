"""The product's URLs plus /bench/hello, the baseline: the same server, settings and middleware,
no database query and no template."""

from django.http import HttpResponse
from django.urls import path

from blindjudge.urls import urlpatterns as product_urlpatterns


def hello(request):
    return HttpResponse("Hello, world", content_type="text/plain")


urlpatterns = [path("bench/hello", hello), *product_urlpatterns]
