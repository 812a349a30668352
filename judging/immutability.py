"""Database triggers that make locked verdicts, locked task flags and the audit log immutable, whoever writes.

The services already refuse; these triggers refuse a raw UPDATE or DELETE too, on SQLite and on
PostgreSQL, so neither a bug nor a hand-typed SQL statement changes a locked verdict. Locking
itself is the one UPDATE allowed: it turns `locked` from false to true.
"""

GUARDED = {
    # table: (condition on OLD under which a change is refused, message)
    "judging_verdict": ("OLD.locked", "locked verdicts are immutable"),
    "judging_taskflag": ("OLD.locked", "locked task flags are immutable"),
    "judging_auditevent": ("TRUE", "the audit log is append-only"),
}

_SQLITE_TRUE = {"OLD.locked": "OLD.locked = 1", "TRUE": "1"}


def _sqlite_statements(tables):
    for table in tables:
        condition, message = GUARDED[table]
        for operation in ("UPDATE", "DELETE"):
            yield (
                f"CREATE TRIGGER IF NOT EXISTS {table}_no_{operation.lower()} "
                f"BEFORE {operation} ON {table} WHEN {_SQLITE_TRUE[condition]} "
                f"BEGIN SELECT RAISE(ABORT, '{message}'); END"
            )


def _postgresql_statements(tables):
    for table in tables:
        condition, message = GUARDED[table]
        function = f"{table}_refuse_change"
        yield (
            f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger AS $$ "
            f"BEGIN IF {condition} THEN RAISE EXCEPTION '{message}' "
            f"USING ERRCODE = 'integrity_constraint_violation'; END IF; "
            f"IF TG_OP = 'DELETE' THEN RETURN OLD; END IF; RETURN NEW; END; "
            f"$$ LANGUAGE plpgsql"
        )
        for operation in ("UPDATE", "DELETE"):
            name = f"{table}_no_{operation.lower()}"
            yield f"DROP TRIGGER IF EXISTS {name} ON {table}"
            yield (
                f"CREATE TRIGGER {name} BEFORE {operation} ON {table} "
                f"FOR EACH ROW EXECUTE FUNCTION {function}()"
            )


def install(connection, tables=None):
    """Install the triggers of `tables` (default: every guarded table). A migration names the
    tables that exist at its point in history (0002: verdicts and the audit log; 0015: task
    flags)."""
    tables = tuple(GUARDED) if tables is None else tuple(tables)
    statements = {
        "sqlite": _sqlite_statements,
        "postgresql": _postgresql_statements,
    }.get(connection.vendor)
    if statements is None:
        raise RuntimeError(f"no immutability triggers for database vendor {connection.vendor!r}")
    with connection.cursor() as cursor:
        for statement in statements(tables):
            cursor.execute(statement)


def uninstall(connection, tables=None):
    """Drop the triggers of `tables` (default: every guarded table). Only the test suite's
    database flush between tests, and a migration taken back, call this."""
    with connection.cursor() as cursor:
        for table in (tuple(GUARDED) if tables is None else tables):
            for operation in ("update", "delete"):
                if connection.vendor == "postgresql":
                    cursor.execute(f"DROP TRIGGER IF EXISTS {table}_no_{operation} ON {table}")
                else:
                    cursor.execute(f"DROP TRIGGER IF EXISTS {table}_no_{operation}")
