"""`GET /metrics`: the Prometheus exposition (system/metrics.py), for a scraper only.

Off (404, as if absent) unless METRICS_TOKEN or METRICS_ALLOWED_NETWORKS is set. With a
token, the scraper sends `Authorization: Bearer <token>` (401 without it or with another);
with networks, the client address (REMOTE_ADDR: behind a proxy, the proxy's) must fall in
one of them (403 otherwise). Both set: both apply. Task paths and LLM purposes are no
secret, but queue depth and spend are nobody else's business.
"""

from __future__ import annotations

import hmac
import ipaddress

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from system.metrics import render_metrics


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    token: str = settings.METRICS_TOKEN
    networks: list[str] = settings.METRICS_ALLOWED_NETWORKS
    if not token and not networks:
        raise Http404("metrics are off")
    if networks and not _address_allowed(request.META.get("REMOTE_ADDR", ""), networks):
        return HttpResponse("forbidden\n", status=403, content_type="text/plain")
    if token and not _bearer_matches(request.headers.get("Authorization", ""), token):
        response = HttpResponse("unauthorized\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(render_metrics(), content_type=CONTENT_TYPE_LATEST)


def _bearer_matches(header: str, token: str) -> bool:
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())


def _address_allowed(address: str, networks: list[str]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in ipaddress.ip_network(cidr, strict=False) for cidr in networks)
