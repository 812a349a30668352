"""The shipped static storage (blindjudge.staticfiles.ManifestStaticFilesStorage) gives the URLs
Django's manifest storage gives, works each one out once, and still refuses a name its manifest
lacks. (The suite's own settings serve static files without a manifest; tests/test_settings.py
runs the real collectstatic.)"""

import json

import pytest
from django.contrib.staticfiles.storage import ManifestStaticFilesStorage as DjangoManifestStorage
from django.test import override_settings

from blindjudge.staticfiles import ManifestStaticFilesStorage

PATHS = {"css/base.css": "css/base.0123456789ab.css",
         "js/item page.js": "js/item page.ba9876543210.js",
         "fonts/f.woff2": "fonts/f.aaaabbbbcccc.woff2"}
NAMES = ("css/base.css", "js/item page.js", "fonts/f.woff2?#iefix")


@pytest.fixture
def static_root(tmp_path):
    (tmp_path / "staticfiles.json").write_text(
        json.dumps({"paths": PATHS, "version": "1.1", "hash": "0123456789ab"}))
    return tmp_path


def storages(root):
    return (ManifestStaticFilesStorage(location=str(root), base_url="/static/"),
            DjangoManifestStorage(location=str(root), base_url="/static/"))


def test_each_url_is_the_one_djangos_manifest_storage_gives(static_root):
    ours, django_own = storages(static_root)
    for name in NAMES:
        assert ours.url(name) == django_own.url(name)
        assert ours.url(name) == django_own.url(name)  # and again, from what was kept
    assert ours.url("css/base.css") == "/static/css/base.0123456789ab.css"


def test_a_url_is_worked_out_once_per_storage(static_root):
    ours, _ = storages(static_root)
    first = ours.url("css/base.css")
    # What the manifest said when the storage was made is what it keeps answering: a changed
    # map (which a running process never sees) shows the kept answer is the one served.
    ours.hashed_files["css/base.css"] = "css/base.ffffffffffff.css"
    assert ours.url("css/base.css") == first
    # Positive control: the same change reaches Django's own storage, which looks it up each time.
    _, django_own = storages(static_root)
    django_own.hashed_files["css/base.css"] = "css/base.ffffffffffff.css"
    assert django_own.url("css/base.css") == "/static/css/base.ffffffffffff.css"


def test_debug_and_force_keep_their_own_answers(static_root):
    ours, _ = storages(static_root)
    hashed = ours.url("css/base.css")
    with override_settings(DEBUG=True):
        assert ours.url("css/base.css") == "/static/css/base.css"
        assert ours.url("css/base.css", force=True) == hashed
    assert ours.url("css/base.css") == hashed


def test_a_name_the_manifest_lacks_is_refused_every_time(static_root):
    ours, _ = storages(static_root)
    for _ in range(2):
        with pytest.raises(ValueError, match="Missing staticfiles manifest entry for 'css/gone.css'"):
            ours.url("css/gone.css")
