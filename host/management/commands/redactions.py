from blindjudge.commands import HostCommand
from judging.selectors.commands import get_session
from judging.selectors.host import blinding_check
from judging.services import (
    blinding_dismiss,
    blinding_undismiss,
    redactions_accept,
    redactions_withdraw,
)


class Command(HostCommand):
    help = ("The blinding check of a session: metadata that will be stripped and every builder "
            "name, product name or model id found in content, finding texts and review reasons, "
            "and the names, hidden characters and redactions of the task and the rubric. "
            "--accept adds patterns to redact (literal, case-insensitive; or re:REGEX); nothing "
            "in content is redacted without acceptance. --dismiss keeps a matched text on purpose "
            "(judges read it; the protocol and the report say so). A session opens only when "
            "every match is redacted or kept.")

    def add_command_arguments(self, parser):
        parser.add_argument("session")
        parser.add_argument("--accept", nargs="+", action="extend", metavar="PATTERN", default=[])
        parser.add_argument("--withdraw", nargs="+", action="extend", metavar="PATTERN", default=[])
        parser.add_argument("--dismiss", nargs="+", action="extend", metavar="MATCH", default=[],
                            help="keep a matched text on purpose (every match of it, any case)")
        parser.add_argument("--undismiss", nargs="+", action="extend", metavar="MATCH", default=[],
                            help="take back --dismiss: the match is undecided again")
        parser.add_argument("--list", action="store_true",
                            help="list every match (default: counts per builder)")

    def run(self, *, session, accept, withdraw, dismiss=(), undismiss=(), list=False, **options):
        session = get_session(session)
        if accept:
            session = redactions_accept(session=session, patterns=accept, actor="cli")
        if withdraw:
            session = redactions_withdraw(session=session, patterns=withdraw, actor="cli")
        if dismiss:
            session = blinding_dismiss(session=session, matches=dismiss, actor="cli")
        if undismiss:
            session = blinding_undismiss(session=session, matches=undismiss, actor="cli")
        check = blinding_check(session)
        check["listed"] = list
        return check

    def describe(self, result):
        lines = [f"session {result['session']} ({result['state']}); accepted patterns: "
                 + (", ".join(repr(p) for p in result["accepted_patterns"]) or "none")
                 + "; kept on purpose: "
                 + (", ".join(repr(k) for k in result["dismissed"]) or "none")]
        for b in result["builders"]:
            lines.append(f"builder {b['builder']} ({b['model']}, {b['family']}): {b['copies']} "
                         f"copies, {b['stripped_lines']} metadata lines stripped, "
                         f"{b['matches']} name matches, {b['redactions']} redactions")
        for shape in result["shapes"]:
            lines.append(f"shape: {shape['words']}: only builder {shape['builder']} "
                         f"({shape['copies']} of {shape['of']} copies); "
                         + ("removed before judges see it" if shape["stripped"] else "judges see it"))
        for t in result["texts"]:
            if t["matches"] or t["hidden_total"] or t["redactions"] or t["mixed_script"]:
                lines.append(f"{t['where']}: {len(t['matches'])} name matches, {t['hidden_total']} "
                             f"runs of hidden characters, {t['mixed_script']} mixed-script words, "
                             f"{t['redactions']} redactions")
        undecided = result["undecided"]
        lines.append(f"undecided: {len(undecided)} matched name(s) neither redacted nor kept on "
                     "purpose" + (" (the session cannot open until each is decided)"
                                  if undecided else ""))
        for u in undecided:
            lines.append(f"  undecided {u['matched']!r}: {u['count']}x, first in {u['first']}")
        if result["listed"]:
            for t in result["texts"]:
                for m in t["matches"]:
                    lines.append(f"  {t['where']} {m['line']}:{m['column']}: {m['matched']!r} "
                                 f"({m['why']}, {m['status']}) — {m['context']}")
                for h in t["hidden"]:
                    lines.append(f"  {t['where']} {h['line']}:{h['column']}: {h['label']} "
                                 f"({h['kind']}) × {h['count']}")
            for c in result["copies"]:
                for line in c["stripped_metadata"]:
                    lines.append(f"  {c['copy']}: strip  {line}")
                for m in c["matches"]:
                    lines.append(f"  {c['copy']} {m['where']} {m['line']}:{m['column']}: "
                                 f"{m['matched']!r} ({m['why']}, {m['status']}) — {m['context']}")
        else:
            lines.append("(--list shows every match)")
        return lines
