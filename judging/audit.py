"""Writing to the append-only audit log, called only from inside services."""

from judging.models import AuditEvent


def record(action: str, *, actor: str, run=None, session=None, **details) -> AuditEvent:
    """Append one event. Details must never hold personal names or logins (erasure keeps the log)."""
    if session is not None and run is None:
        run = session.run
    return AuditEvent.objects.create(
        action=action, actor=actor, run=run, session=session, details=details
    )
