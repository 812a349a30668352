"""The judge's instructions page (issue 17 item 2): the host's instructions, as rendered once when
the session opened, and what the product says itself: how many items this judge has, a time
estimate, the keys, what phase 2 is, and what each mark in a copy means.

Guards first (`judge_required`: 404 to anyone but this session's judge). What it shows comes from
the judge selectors and from content.instructions (facts of the product, rendered by the
template); nothing here renders model or host text.
"""

from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from accounts.guards import judge_required
from judge.pages import instructions_context, judge_links
from judging.selectors.judge import judge_instructions


@never_cache
@judge_required
@require_safe
def instructions(request, url_id):
    judge = request.judge
    context = instructions_context(session=judge.session, shown=judge_instructions(judge),
                                   links=judge_links(url_id))
    return render(request, "judge/instructions.html", {**context, "judge": judge})

