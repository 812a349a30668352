"""A host signing in on the real sign-in page, as the browser tests' hosts do."""

from playwright.sync_api import expect


def sign_in_as_host(page, server, username: str, password: str):
    """Sign in at /accounts/login/ and land on the host's runs page."""
    page.goto(server.url("/accounts/login/"))
    page.get_by_label("Username", exact=True).fill(username)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Runs", exact=True)).to_be_visible()
    # The heading shows once the HTML is parsed, before the stylesheets arrive: a test that
    # measures what is shown (hidden fields, label boxes) must not run on the unstyled page.
    page.wait_for_load_state("load")
