"""The ASGI application: Django's HTTP handling, and the live websockets (blindjudge/routing.py).

Websockets pass the Origin check first (`AllowedHostsOriginValidator`: a page on another site
cannot open a socket with the visitor's cookies), then the session and user are read from the
cookie, as for a page; the consumers' guards decide from those.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "blindjudge.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from blindjudge.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter({
    "http": django_asgi_app,
    "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
})
