"""Benchmark-only settings: the product's settings unchanged but for one extra URL, a hello-world
view (bench/urls.py) that is the baseline every real request is compared with. Never shipped in
the product's URLs; deploy/serve picks this module up through DJANGO_SETTINGS_MODULE."""

from blindjudge.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
