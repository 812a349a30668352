"""The first lines of every view: who may be here at all.

`host_required`: anonymous visitors go to sign-in; a signed-in person who is not a host gets the
same 404 as a page that does not exist. Objects are then fetched through the host selectors,
which give another host's ids that same 404.
`judge_required`: the judge this browser was admitted as in the session named by the URL, or
404 for everyone else (another judge, a removed judge, an unknown session, nobody).
Websocket consumers use the same checks (`host_of`, `judge_held_by`) on the socket's scope.

A browser holds a judge as the judge's id and credential generation (`judge_binding`). Reissuing
or revoking the judge's resume links bumps the generation, so every browser session opened
before then, by whichever way in (join link, resume link, guest code, GitHub), stops being
admitted at its next request or socket message; the guard then forgets the binding. A binding
written before generations existed (the id alone) counts as generation 0.
"""

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.http import Http404

from accounts.enums import JudgeStatus
from accounts.models import Host, Judge
from blindjudge.prepared import PreparedQuery

JUDGE_SESSION_KEY = "judge:{url_id}"


def host_of(user) -> Host | None:
    """The Host row of a signed-in user, or None (anonymous visitors and non-hosts alike)."""
    if user is None or not user.is_authenticated:
        return None
    return Host.objects.filter(user=user).first()


def host_required(view):
    @wraps(view)
    def guarded(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        host = Host.objects.filter(user=request.user).first()
        if host is None:
            raise Http404("not a host")
        request.host = host
        return view(request, *args, **kwargs)

    return guarded


def judge_binding(judge: Judge) -> list[int]:
    """What a browser session keeps of the judge it was admitted as: id and credential generation."""
    return [judge.pk, judge.credential_generation]


def _bound(value) -> tuple[int, int] | None:
    """(judge id, generation) from a stored binding, or None for anything else."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value, 0  # bound before generations existed
    if (isinstance(value, list) and len(value) == 2
            and all(isinstance(part, int) and not isinstance(part, bool) for part in value)):
        return value[0], value[1]
    return None


def admitted_judge(request, url_id: str) -> Judge | None:
    """The judge this request's browser holds in the session `url_id`, or None. A binding of an
    earlier credential generation (the judge's links reissued or revoked since) is forgotten, so
    the browser no longer counts the session as its own (the home page, a guest's replayed join).
    A removed judge's binding is kept: their browser goes on being told it was removed."""
    judge = judge_held_by(request.session, url_id)
    if judge is None and url_id:
        key = JUDGE_SESSION_KEY.format(url_id=url_id)
        bound = _bound(request.session.get(key))
        if bound is not None and (Judge.objects.filter(pk=bound[0], session__url_id=url_id,
                                                       status=JudgeStatus.ACTIVE)
                                  .exclude(credential_generation=bound[1]).exists()):
            del request.session[key]
    return judge


def judge_held_by(browser_session, url_id: str) -> Judge | None:
    """The active judge a browser's session (a request's, or a websocket scope's) holds in the
    session with this URL id, at the judge's current credential generation, or None."""
    bound = _bound(browser_session.get(JUDGE_SESSION_KEY.format(url_id=url_id))) if url_id else None
    if bound is None:
        return None
    judge_pk, generation = bound
    if not (0 < judge_pk < 2**63 and 0 <= generation < 2**63):  # no such row; a database's integer
        return None
    return _HELD_JUDGE.first(pk=judge_pk, url_id=url_id, generation=generation)


# Every judge request starts here: compiled once per process (blindjudge/prepared.py), where
# building and compiling the queryset each time cost more than the database's answer. It leaves
# out the session's protocol and the run's manifest, large JSON documents (an entry per item) that
# no judge page reads, and any ORDER BY: one row by primary key needs none.
_HELD_JUDGE = PreparedQuery(
    lambda pk, url_id, generation: (
        Judge.objects.select_related("session__run")
        .defer("session__protocol", "session__run__manifest", "session__run__request_keys")
        .filter(pk=pk, session__url_id=url_id, status=JudgeStatus.ACTIVE,
                credential_generation=generation).order_by()),
    pk=2_147_480_033, url_id="prepared:url_id:sentinel", generation=2_147_480_021)


def held_sessions(request) -> list[str]:
    """URL ids of the sessions this browser judges in."""
    prefix = JUDGE_SESSION_KEY.split("{")[0]
    return [key[len(prefix):] for key in request.session.keys() if key.startswith(prefix)]


def remember_judge(request, judge: Judge):
    """Bind this browser to a judge at the generation `judge` was read with (read it with the
    credential that admits the browser, so a reissue in between leaves a binding that no longer
    admits); the session key rotates first (no session fixation)."""
    request.session.cycle_key()
    request.session[JUDGE_SESSION_KEY.format(url_id=judge.session.url_id)] = judge_binding(judge)


def judge_required(view):
    @wraps(view)
    def guarded(request, url_id, *args, **kwargs):
        judge = admitted_judge(request, url_id)
        if judge is None:
            raise Http404("no such page")
        request.judge = judge
        return view(request, url_id, *args, **kwargs)

    return guarded
