"""The CSV of join links a host downloads, or the `invite --csv` command writes, once, after
inviting a list: name, note, join link, expiry. The links exist in clear only in this text (the
database keeps their hashes), so it is handed over once and never stored."""

import csv
import io

from blindjudge.links import join_link
from content.spreadsheet import neutralise_cell

JOIN_LINKS_CSV_COLUMNS = ["name", "note", "join_link", "expires_at"]


def join_links_csv(invited) -> str:
    """`invited`: services.Invited, in the list's order. CRLF rows with a header row; a name or
    note a spreadsheet would run as a formula is neutralised as in the report's CSV."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(JOIN_LINKS_CSV_COLUMNS)
    for one in invited:
        writer.writerow([neutralise_cell(one.invitation.name), neutralise_cell(one.invitation.note),
                         join_link(one.join_token),
                         one.expires_at.strftime("%Y-%m-%dT%H:%M:%SZ")])
    return out.getvalue()
