"""Websocket paths. Like the judge's pages, no sequential id on a judge's path: the session's
random URL id, and the judge from the browser's server-side session only."""

from django.urls import path, re_path

from judging import consumers

websocket_urlpatterns = [
    path("ws/host/sessions/<int:session_id>/", consumers.HostLiveConsumer.as_asgi()),
    path("ws/s/<str:url_id>/", consumers.JudgeLiveConsumer.as_asgi()),
    re_path(r"", consumers.NoSuchSocket.as_asgi()),
]
