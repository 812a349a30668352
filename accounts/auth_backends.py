"""Password sign-in that hands its database connection back before hashing.

A password hash takes hundreds of milliseconds of CPU by design. Held through it, a pooled
PostgreSQL connection serves nobody else: forty sign-ins sent at once drained the pools, and an
unrelated judge's save failed waiting for a connection (issue 25). allauth's backend (which
finds the username without case, as sign-in here does) with one change: just before a password
is hashed — checked, or hashed against nothing to take the same time when the username is
unknown — the connection goes back to the pool; the next query takes one again.
"""

from allauth.account.auth_backends import AuthenticationBackend
from django.db import connection


def release_pooled_connection() -> None:
    """Give the request's pooled connection back (never inside a transaction, and only where the
    database is pooled: SQLite's connection is not shared, closing it would only cost a reopen)."""
    if (connection.connection is not None and not connection.in_atomic_block
            and (connection.settings_dict.get("OPTIONS") or {}).get("pool")):
        connection.close()


class PasswordBackend(AuthenticationBackend):
    def _check_password(self, user, password):
        if user:
            release_pooled_connection()
        return super()._check_password(user, password)

    def _mitigate_timing_attack(self, password) -> None:
        release_pooled_connection()
        super()._mitigate_timing_attack(password)
