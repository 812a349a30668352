"""Settings of the end-to-end server process: the test settings plus the test-only URLconf.

Lives under tests/, so the deliberately unsafe pages of `tests.e2e.urls_e2e` never ship.
"""

from blindjudge.settings_test import *  # noqa: F403

ROOT_URLCONF = "tests.e2e.urls_e2e"
