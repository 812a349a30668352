"""Websocket paths. Like the judge's pages, no sequential id on a judge's path: the session's
random URL id, and the judge from the browser's server-side session only. Only this module and
blindjudge/urls.py import the page packages (host, judge)."""

from django.urls import path, re_path

from host.consumers import HostLiveConsumer
from judge.consumers import JudgeLiveConsumer
from judging.live_consumer import NoSuchSocket

websocket_urlpatterns = [
    path("ws/host/sessions/<int:session_id>/", HostLiveConsumer.as_asgi()),
    path("ws/s/<str:url_id>/", JudgeLiveConsumer.as_asgi()),
    re_path(r"", NoSuchSocket.as_asgi()),
]
