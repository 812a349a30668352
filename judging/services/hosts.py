"""Hosts: created by command or by an allowlisted GitHub sign-in; their passwords and GitHub links."""

import secrets
from dataclasses import dataclass

from allauth.socialaccount.models import SocialAccount
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.models import Host
from blindjudge.errors import Conflict, Invalid, Refused
from judging import audit
from judging.services.sockets import host_sockets_close


@dataclass(frozen=True)
class HostCreated:
    host: Host
    password: str
    generated: bool


def host_create(*, username: str, password: str | None = None) -> HostCreated:
    """Create a host account that signs in with a password.

    A generated password (shown once to the caller) is used when none is given; a given password
    must pass the password validators. Side effects: creates the User and its Host row.
    """
    username = username.strip()
    User = get_user_model()
    try:
        User.username_validator(username)
    except ValidationError as error:
        raise Invalid(f"username: {' '.join(error.messages)}") from None
    if not username:
        raise Invalid("username: must not be empty")
    generated = password is None
    if generated:
        password = secrets.token_urlsafe(18)
    user = User(username=username)
    try:
        validate_password(password, user)
    except ValidationError as error:
        raise Invalid("password: " + " ".join(error.messages)) from None
    with transaction.atomic():
        if User.objects.filter(username__iexact=username).exists():
            raise Conflict(f'a user named "{username}" already exists')
        user.set_password(password)
        user.save()
        host = Host.objects.create(user=user)
    return HostCreated(host=host, password=password, generated=generated)


def host_password_set(*, host: Host, password: str | None = None) -> HostCreated:
    """Set a host's password (a generated one, returned once, when none is given).

    Side effects: replaces the password hash of the host's account (every browser signed in to
    it is signed out at its next request); the host's open dashboard sockets are closed.
    """
    generated = password is None
    if generated:
        password = secrets.token_urlsafe(18)
    try:
        validate_password(password, host.user)
    except ValidationError as error:
        raise Invalid("password: " + " ".join(error.messages)) from None
    host.user.set_password(password)
    host.user.save(update_fields=["password"])
    host_sockets_close(user_id=host.user_id)
    return HostCreated(host=host, password=password, generated=generated)


HOST_GITHUB_REFUSAL = "This GitHub account is not allowed to host."


def host_from_github(*, user, github_login: str) -> Host:
    """A person signed in with GitHub is a host when their account already is one (a host who
    linked GitHub from their account page) or when their login is on
    BLINDJUDGE_HOST_GITHUB_ALLOWLIST; anyone else is refused with HOST_GITHUB_REFUSAL.

    Side effects: creates the Host row for an allowlisted account the first time, appending
    `host.created` (without the login).
    """
    existing = Host.objects.filter(user=user).first()
    if existing is not None:
        return existing
    login = (github_login or "").strip().lower()
    if not login or login not in settings.BLINDJUDGE_HOST_GITHUB_ALLOWLIST:
        raise Refused(HOST_GITHUB_REFUSAL)
    with transaction.atomic():
        host, created = Host.objects.get_or_create(user=user)
        if created:
            audit.record("host.created", actor="github", by="github")
    return host


GITHUB_LINKED_ELSEWHERE = "This GitHub account is already linked to another account here."


def host_github_link(*, host: Host, github_id: int, github_login: str) -> SocialAccount:
    """Link a GitHub account (as verified by a GitHub sign-in in the host's browser) to the host's
    own account, so the host can sign in with GitHub whether or not their login is allowlisted.

    Refused when that GitHub account already belongs to another account here (a judge's, or
    another host's) or when the host already has a different GitHub account linked.
    Side effects: creates the SocialAccount (id and login only), appends `host.github_linked`.
    """
    login = (github_login or "").strip()
    if not github_id or not login:
        raise Invalid("GitHub did not identify an account; try again")
    with transaction.atomic():
        holder = SocialAccount.objects.filter(provider="github", uid=str(github_id)).first()
        if holder is not None:
            if holder.user_id != host.user_id:
                raise Conflict(GITHUB_LINKED_ELSEWHERE)
            return holder
        if SocialAccount.objects.filter(provider="github", user=host.user).exists():
            raise Conflict("Your account already has a GitHub account linked; unlink it first.")
        account = SocialAccount.objects.create(
            user=host.user, provider="github", uid=str(github_id),
            extra_data={"id": github_id, "login": login})
        audit.record("host.github_linked", actor=f"host:{host.user.get_username()}")
    return account


def host_github_unlink(*, host: Host) -> int:
    """Unlink the host's GitHub account; they sign in with their password again (or with GitHub
    where their login is allowlisted). Refused when the host has no usable password, which would
    leave them no way in. Side effects: deletes the SocialAccount, appends `host.github_unlinked`.
    """
    with transaction.atomic():
        accounts = SocialAccount.objects.filter(provider="github", user=host.user)
        if not accounts.exists():
            raise Conflict("No GitHub account is linked to your account.")
        if not host.user.has_usable_password():
            raise Conflict("Your account has no password, so without GitHub you could not sign in. "
                           "Set one first: manage.py createhost USERNAME --set-password.")
        count, _ = accounts.delete()
        audit.record("host.github_unlinked", actor=f"host:{host.user.get_username()}")
    return count
