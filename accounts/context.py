"""Template context: whether this installation has a GitHub OAuth app (GITHUB_CLIENT_ID) set up."""

from django.conf import settings


def github_sign_in_enabled() -> bool:
    app = settings.SOCIALACCOUNT_PROVIDERS.get("github", {}).get("APP", {})
    return bool(app.get("client_id") and app.get("secret"))


def github(request):
    return {"github_sign_in": github_sign_in_enabled()}
