"""The CSV of join links a host downloads, or the `invite --csv` command writes, once, after
inviting a list: name, note, join link, expiry. The links exist in clear only in this text (the
database keeps their hashes), so it is handed over once and never stored."""

import csv
import io

from blindjudge.links import join_link

JOIN_LINKS_CSV_COLUMNS = ["name", "note", "join_link", "expires_at"]
# A spreadsheet runs a cell starting with a formula sign (or whitespace before one) as a formula;
# the same list reports/export.py neutralises in the report's CSV (the layers keep judging from
# importing reports).
FORMULA_PREFIXES = ("=", "+", "-", "@", ";", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def _cell(text: str) -> str:
    return "'" + text if text and (text.startswith(FORMULA_PREFIXES) or text[0].isspace()) else text


def join_links_csv(invited) -> str:
    """`invited`: services.Invited, in the list's order. CRLF rows with a header row."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(JOIN_LINKS_CSV_COLUMNS)
    for one in invited:
        writer.writerow([_cell(one.invitation.name), _cell(one.invitation.note),
                         join_link(one.join_token),
                         one.expires_at.strftime("%Y-%m-%dT%H:%M:%SZ")])
    return out.getvalue()
