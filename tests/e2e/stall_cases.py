"""Run only by tests/e2e/test_watchdog.py (the name keeps it out of the suite's collection): a
browser test whose renderer never answers, and the test after it in the same module."""


def test_a_renderer_that_never_answers(browser):
    page = browser.new_page()
    # Playwright's evaluate has no timeout of its own: this waits for as long as the loop runs.
    page.evaluate("() => { while (true) {} }")


def test_the_next_test_gets_a_browser_that_answers(browser):
    assert browser.new_page().evaluate("() => 6 * 7") == 42
