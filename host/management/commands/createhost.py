from django.core.management.base import CommandError

from blindjudge.commands import HostCommand, read_text_file
from blindjudge.links import host_sign_in
from judging.selectors.commands import get_host
from judging.services import host_create, host_password_set


class Command(HostCommand):
    help = ("Create a host account, or with --set-password give an existing host a new password. "
            "A generated password is printed when no --password-file is given.")

    def add_command_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--password-file", help="a file holding the password (- for stdin)")
        parser.add_argument("--set-password", action="store_true",
                            help="the host exists (e.g. signed in with GitHub): set their password")

    def run(self, *, username, password_file=None, set_password=False, **options):
        password = None
        if password_file:
            password = read_text_file(password_file, "--password-file").rstrip("\r\n")
            if not password:
                raise CommandError("--password-file: the file is empty")
        if set_password:
            created = host_password_set(host=get_host(username), password=password)
        else:
            created = host_create(username=username, password=password)
        result = {"host": created.host.user.username, "sign_in": host_sign_in()}
        if created.generated:
            result["password"] = created.password
        return result
