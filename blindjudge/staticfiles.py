"""Static files from the app process (WhiteNoise), without the manifest; their URLs worked out once.

collectstatic writes `staticfiles.json` into STATIC_ROOT beside the files: the map from every
source name to its hashed name. Pages never ask for it and nothing needs it over HTTP, so it is not
served (it would list every file the installation ships, the names and versions of its parts).
WhiteNoise serves every file under STATIC_ROOT; this leaves the manifest out, whether the files were
scanned at start-up or are looked up per request (WHITENOISE_AUTOREFRESH, on with DEBUG).
nginx's config (deploy/nginx/blindjudge.conf) refuses it the same way.
"""

from django.conf import settings
from django.contrib.staticfiles.storage import ManifestFilesMixin
from whitenoise.middleware import WhiteNoiseMiddleware
from whitenoise.storage import CompressedManifestStaticFilesStorage

MANIFEST_NAME = ManifestFilesMixin.manifest_name


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    def _is_manifest(self, url: str) -> bool:
        return url in (self.static_prefix + MANIFEST_NAME, self.static_prefix + MANIFEST_NAME + ".gz")

    def add_file_to_dictionary(self, url, path, stat_cache=None):
        if not self._is_manifest(url):
            super().add_file_to_dictionary(url, path, stat_cache=stat_cache)

    def find_file(self, url):
        return None if self._is_manifest(url) else super().find_file(url)


class ManifestStaticFilesStorage(CompressedManifestStaticFilesStorage):
    """WhiteNoise's manifest storage (hashed names, compressed copies), each URL worked out once.

    The manifest is read when the storage is made and never again, so a name's URL cannot change
    while the storage lives; but Django's `static` tag asks for it afresh on every page (a path
    clean-up, a manifest lookup and a URL join for each of a page's six static files: 8 % of the
    item page's CPU, profiled). The answers are kept per name, per `force` and per DEBUG (which
    turns hashing off). A name the manifest lacks raises as before, every time.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._urls: dict[tuple[str, bool, bool], str] = {}

    def url(self, name, force=False):
        key = (name, force, settings.DEBUG)
        url = self._urls.get(key)
        if url is None:
            url = self._urls[key] = super().url(name, force)
        return url
