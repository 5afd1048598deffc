"""gzip for large data answers only: JSON, NDJSON, CSV and GraphML from the API and the
exports, never a page.

Compression leaks the size of a response, and BREACH turns that into a secret when the
same body holds a secret (a CSRF token, a freshly issued API token) next to text an
attacker chooses. So the rule is an allow-list, not Django's compress-everything:

* the JSON API under /api/v1/ on safe methods (GET, HEAD), plus the explorer's bulk graph
  POST (`…/graph`, a read posted for its long id list): these bodies carry graph data,
  never a CSRF token or a session secret;
* never the API token endpoints (`…/tokens…`: creation answers the plaintext token once);
* the entities CSV export of the explorer (`…/entities/export.csv`, a GET);
* only data content types (HTML, whose forms carry the CSRF token, never), and only
  bodies of at least MIN_BYTES; streamed exports stay streamed (compressed chunk by chunk).

Static files are WhiteNoise's, precompressed at collectstatic.
"""

from __future__ import annotations

import re

from django.http import HttpRequest, HttpResponseBase
from django.middleware.gzip import GZipMiddleware

MIN_BYTES = 1024
DATA_TYPES = frozenset(
    {
        "application/json",
        "application/x-ndjson",
        "text/csv",
        "application/graphml+xml",
    }
)
_API = "/api/v1/"
_TOKENS = re.compile(r"/tokens(/|$)")
_BULK_GRAPH = re.compile(r"^/api/v1/workspaces/[^/]+/graph$")
_ENTITIES_CSV = "/entities/export.csv"


class DataCompressionMiddleware(GZipMiddleware):
    """Django's GZipMiddleware (Vary, weak ETags, streaming, random filler against
    length oracles), applied only where `compressible` says so."""

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if not compressible(request, response):
            return response
        return super().process_response(request, response)


def compressible(request: HttpRequest, response: HttpResponseBase) -> bool:
    content_type = response.get("Content-Type", "").split(";")[0].strip().lower()
    if content_type not in DATA_TYPES:
        return False
    if not response.streaming and len(response.content) < MIN_BYTES:  # type: ignore[attr-defined]
        return False
    return _route_allowed(request.method or "", request.path)


def _route_allowed(method: str, path: str) -> bool:
    if path.startswith(_API):
        if _TOKENS.search(path):
            return False
        return method in {"GET", "HEAD"} or (method == "POST" and bool(_BULK_GRAPH.match(path)))
    return method in {"GET", "HEAD"} and path.endswith(_ENTITIES_CSV)
