"""The host's pages (all under /host/), one module per area: runs, sessions, blinding (and the
planner), invitations (and guests), judges (and progress), reports, account; common.py holds what
they share.

Every view starts with its guard: `common.for_host_session` or `common.for_host_run` (a signed-in
host, then their own session or run through the host selectors, so another host's ids are the
same 404 as ids that do not exist, whatever the method), or plain `host_required`.
Changes are POSTs (with CSRF) that call one service each and redirect (303) with a message, all
through `common.host_change`. A refusal re-shows the page with the message and everything the
host typed, with the refusal's status; anything else a service raises is rendered by
ServiceErrorMiddleware.

Credentials (join links, guest codes, resume links) exist in clear only in the service's return
value. They are kept in the host's server-side session just long enough to be shown once on the
page the POST redirects to, which pops them, and never go into messages (a cookie) or logs. The
join links of a list of invitees are not even kept there: the list's POST creates the
invitations without links and keeps only their ids, and the one download of their CSV issues the
links in the response that carries them (invitations.join_links_download).
Host pages are sent with `Cache-Control: no-store`: they hold truth labels, names and, once, a
credential.

reports (and numpy under it, ~15 MB and 0.2 s per process) load on the first page that needs
them, the planner and the report download, never in a process that serves only judges. Nothing
is re-exported here: host/urls.py names each view by its module.
"""
