"""GitHub sign-up for judges: the hosts' allowlist (accounts.adapters), and every login a host has
listed for a session that is open now, or already bound to an active judge of one."""

from accounts.adapters import ListedGitHubSocialAccountAdapter
from judging.services import github_login_invited


class InvitedGitHubSocialAccountAdapter(ListedGitHubSocialAccountAdapter):
    def is_listed(self, login: str, github_id: int | None) -> bool:
        return super().is_listed(login, github_id) or github_login_invited(login, github_id)
