"""allauth adapters: nobody signs up by themselves. Hosts are created with `createhost`; GitHub
sign-in (issue 4) opens only where a login is listed."""

from allauth.account.adapter import DefaultAccountAdapter


class ClosedSignupAccountAdapter(DefaultAccountAdapter):
    def is_open_for_signup(self, request):
        return False
