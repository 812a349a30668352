from django.core.management.base import CommandError

from accounts.services import host_create
from blindjudge.commands import HostCommand, read_text_file
from blindjudge.links import host_sign_in


class Command(HostCommand):
    help = "Create a host account. A generated password is printed when no --password-file is given."

    def add_command_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--password-file", help="a file holding the password (- for stdin)")

    def run(self, *, username, password_file=None, **options):
        password = None
        if password_file:
            password = read_text_file(password_file, "--password-file").rstrip("\r\n")
            if not password:
                raise CommandError("--password-file: the file is empty")
        created = host_create(username=username, password=password)
        result = {"host": created.host.user.username, "sign_in": host_sign_in()}
        if created.generated:
            result["password"] = created.password
        return result
