"""Static files from the app process (WhiteNoise), without the manifest.

collectstatic writes `staticfiles.json` into STATIC_ROOT beside the files: the map from every
source name to its hashed name. Pages never ask for it and nothing needs it over HTTP, so it is not
served (it would list every file the installation ships, the names and versions of its parts).
WhiteNoise serves every file under STATIC_ROOT; this leaves the manifest out, whether the files were
scanned at start-up or are looked up per request (WHITENOISE_AUTOREFRESH, on with DEBUG).
nginx's config (deploy/nginx/blindjudge.conf) refuses it the same way.
"""

from django.contrib.staticfiles.storage import ManifestFilesMixin
from whitenoise.middleware import WhiteNoiseMiddleware

MANIFEST_NAME = ManifestFilesMixin.manifest_name


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    def _is_manifest(self, url: str) -> bool:
        return url in (self.static_prefix + MANIFEST_NAME, self.static_prefix + MANIFEST_NAME + ".gz")

    def add_file_to_dictionary(self, url, path, stat_cache=None):
        if not self._is_manifest(url):
            super().add_file_to_dictionary(url, path, stat_cache=stat_cache)

    def find_file(self, url):
        return None if self._is_manifest(url) else super().find_file(url)
