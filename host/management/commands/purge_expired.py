from blindjudge.commands import HostCommand
from judging.services import expired_purge


class Command(HostCommand):
    help = ("Delete expired browser sessions (as Django's clearsessions), attempt counters whose "
            "window is long over and socket rows of killed processes. Run daily by the shipped "
            "systemd timer and at ./bj start; safe to run at any time.")

    def run(self, **options):
        purged = expired_purge()
        return {"sessions": purged.sessions, "counters": purged.counters, "sockets": purged.sockets}

    def describe(self, result):
        return [f"deleted: {result['sessions']} expired sessions, {result['counters']} old attempt "
                f"counters, {result['sockets']} stale socket rows"]
