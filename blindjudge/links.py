"""Absolute links printed for hosts, built on SITE_URL. The pages behind them live in the apps."""

from django.conf import settings


def absolute(path: str) -> str:
    return f"{settings.SITE_URL}{path}"


def join_link(token: str) -> str:
    return absolute(f"/join/{token}")


def resume_link(token: str) -> str:
    return absolute(f"/resume/{token}")


def guest_page() -> str:
    return absolute("/guest/")


def host_sign_in() -> str:
    return absolute(settings.LOGIN_URL)


def github_join_link(url_id: str) -> str:
    """Where a judge whose GitHub login the host listed signs in; it admits nobody else."""
    return absolute(f"/github/join/{url_id}/")
