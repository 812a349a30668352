"""An opening started from the host's page, in a process of its own.

Opening renders every text a session's judges will see (judging.services.session_open). That is
model output through the normaliser, markdown and lexers: seconds for a large session, and a
hostile copy must never hold a serving process (`re` holds the GIL, so every other request of the
process would wait). So the page's opening (judging.services.session_open_start, after its checks
and its claim) runs

    python -m judging.opening SESSION_ID OPENER ACTOR

a child of the serving process in a session of its own (a server that restarts leaves it to
finish), which calls `session_open` with the claim it was given, in its main thread, where each
text's deadline works (judging.renders.deadline). Its progress is counted on the claim
(SessionRender.rendered / to_render: the page polls it); a refusal (ServiceError) or a crash is
kept there too (`opening_failed`), and a thread of the serving process waits for the child, so a
child killed from outside (out of memory, say) is reported at once rather than when its claim's
lease runs out. Nothing passes on its standard streams but its log, to the server's standard
error.
"""

import logging
import os
import subprocess
import sys
import threading

from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)


def start(*, session_id: int, opener: str, actor: str) -> subprocess.Popen:
    """Start the process that opens the session under the claim `opener`; returns at once."""
    env = dict(os.environ)
    # The serving process's own settings (asgi.py and manage.py put their name here).
    env.setdefault("DJANGO_SETTINGS_MODULE", settings.SETTINGS_MODULE or "blindjudge.settings")
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and module, fixed arguments
        [sys.executable, "-m", "judging.opening", str(session_id), opener, actor],
        cwd=settings.BASE_DIR, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=None, close_fds=True, start_new_session=True)
    threading.Thread(target=_wait, args=(process, session_id, opener), daemon=True,
                     name=f"opening-{session_id}").start()
    return process


def _wait(process: subprocess.Popen, session_id: int, opener: str) -> None:
    """Reap the child; one that ended without saying why (killed) leaves its reason here."""
    status = process.wait()
    if status == 0:
        return
    from judging.services import opening_failed  # noqa: PLC0415 - cycle: the services import this module

    try:
        opening_failed(session_id=session_id, opener=opener, message=(
            f"The opening stopped before it finished (its process ended with status {status}); "
            "what it rendered is kept. Open the session again."), claimed_only=True)
    except Exception:
        logger.exception("could not record the end of session %s's opening", session_id)
    finally:
        connection.close()


def main(argv: list[str]) -> int:
    session_id, opener, actor = int(argv[0]), argv[1], argv[2]
    import django  # noqa: PLC0415 - lazy: Django is set up in this process only

    django.setup()
    from blindjudge.errors import ServiceError  # noqa: PLC0415 - after setup
    from judging.models import Session  # noqa: PLC0415 - after setup
    from judging.services import opening_failed, session_open  # noqa: PLC0415 - after setup

    try:
        session_open(session=Session.objects.get(pk=session_id), actor=actor, opener=opener)
    except ServiceError as error:
        opening_failed(session_id=session_id, opener=opener, message=str(error))
    except Exception:
        logger.exception("the opening of session %s failed", session_id)
        opening_failed(session_id=session_id, opener=opener, message=(
            "The opening failed on an unexpected error (the server's log has it); what it "
            "rendered is kept. Open the session again."))
        return 1
    return 0


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "blindjudge.settings")
    sys.exit(main(sys.argv[1:]))
