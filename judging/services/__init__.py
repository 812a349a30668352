"""Every state change: one keyword-only function each, grouped by what it changes.

Views, websocket consumers and management commands call these and never write the ORM themselves.
Each docstring lists the function's side effects. Refusals are `blindjudge.errors` exceptions, which
callers turn into an HTTP status, a closed socket or a command error with the same message.

    runs        importing a bundle, correcting truth
    sessions    the draft, redactions, guests, opening, amendments, close / reopen / reveal
    admission   joining: join link, guest code, GitHub, the host; credentials stored hashed
    judges      after joining: resume links, removal, erasure, linking GitHub
    verdicts    saving a verdict or a draft reason, locking a phase
    sockets     which websockets are connected now; closing a host's at sign-out
    hosts       host accounts and their GitHub links
    housekeeping  deleting expired sessions, attempt counters and socket rows
    checks      the limits every service holds its inputs to

Callers import from this package; the modules are its rooms.
"""

from judging.services.admission import (
    GITHUB_REFUSAL,
    GUEST_JOINS_REFUSAL,
    GUEST_REFUSAL,
    JOIN_REFUSAL,
    RESUME_REFUSAL,
    Admission,
    AlreadyAdmitted,
    Invited,
    github_judge_join,
    github_login_invited,
    guest_join,
    host_join,
    invitation_create,
    join_token_exchange,
    token_sha256,
)
from judging.services.checks import (
    GITHUB_LOGIN,
    MAX_DISPLAY_NAME,
    MAX_GUEST_CAP,
    MAX_REASON_CHARS,
    MAX_TEXT_CHARS,
    bundle_limits,
    check_guest_cap,
    checked_github_login,
    checked_text,
    display_name_limit,
    text_limit,
)
from judging.services.hosts import (
    GITHUB_LINKED_ELSEWHERE,
    HOST_GITHUB_REFUSAL,
    HostCreated,
    host_create,
    host_from_github,
    host_github_link,
    host_github_unlink,
    host_password_set,
)
from judging.services.housekeeping import Purged, expired_purge
from judging.services.judges import (
    LINK_BOTH_HOLD_VERDICTS,
    GitHubLinked,
    judge_erase,
    judge_github_link,
    judge_remove,
    resume_token_reissue,
    resume_token_revoke,
)
from judging.services.runs import run_import, truth_correct
from judging.services.sessions import (
    PROTOCOL_VERSION,
    UNCHANGED,
    UNSET,
    GuestRemoved,
    GuestSettings,
    SessionCreated,
    guest_remove,
    guests_configure,
    prereg_amend,
    protocol_of,
    redactions_accept,
    redactions_withdraw,
    session_close,
    session_create,
    session_open,
    session_reopen,
    session_reveal,
    session_update_draft,
)
from judging.services.sockets import (
    host_sockets_close,
    live_socket_close,
    live_socket_open,
    live_socket_seen,
)
from judging.services.verdicts import (
    CHANGED_ELSEWHERE,
    COPY_VERDICTS,
    FINDING_VERDICTS,
    KEEP,
    ChangedElsewhere,
    ItemSaved,
    item_save,
    phase_lock,
    verdict_record,
    verdict_values,
)

__all__ = [
    "Admission",
    "AlreadyAdmitted",
    "CHANGED_ELSEWHERE",
    "COPY_VERDICTS",
    "ChangedElsewhere",
    "FINDING_VERDICTS",
    "GITHUB_LINKED_ELSEWHERE",
    "GITHUB_REFUSAL",
    "GUEST_JOINS_REFUSAL",
    "GUEST_REFUSAL",
    "GitHubLinked",
    "GuestRemoved",
    "GuestSettings",
    "HOST_GITHUB_REFUSAL",
    "HostCreated",
    "Invited",
    "ItemSaved",
    "JOIN_REFUSAL",
    "KEEP",
    "LINK_BOTH_HOLD_VERDICTS",
    "MAX_DISPLAY_NAME",
    "MAX_GUEST_CAP",
    "MAX_REASON_CHARS",
    "MAX_TEXT_CHARS",
    "PROTOCOL_VERSION",
    "RESUME_REFUSAL",
    "SessionCreated",
    "UNCHANGED",
    "UNSET",
    "Purged",
    "bundle_limits",
    "GITHUB_LOGIN",
    "check_guest_cap",
    "checked_github_login",
    "expired_purge",
    "checked_text",
    "display_name_limit",
    "github_judge_join",
    "github_login_invited",
    "guest_join",
    "guest_remove",
    "guests_configure",
    "host_create",
    "host_from_github",
    "host_github_link",
    "host_github_unlink",
    "host_join",
    "host_password_set",
    "host_sockets_close",
    "invitation_create",
    "join_token_exchange",
    "item_save",
    "judge_erase",
    "judge_github_link",
    "judge_remove",
    "live_socket_close",
    "live_socket_open",
    "live_socket_seen",
    "phase_lock",
    "prereg_amend",
    "protocol_of",
    "redactions_accept",
    "redactions_withdraw",
    "resume_token_reissue",
    "resume_token_revoke",
    "run_import",
    "session_close",
    "session_create",
    "session_open",
    "session_reopen",
    "session_reveal",
    "session_update_draft",
    "text_limit",
    "token_sha256",
    "truth_correct",
    "verdict_record",
    "verdict_values",
]
