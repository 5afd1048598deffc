"""One TLS context per process for the HTTP clients Graphloom opens (the LLM client, the
crawler's fetcher).

httpx builds a new `ssl.SSLContext` for every client unless it is given one, and building one
loads and parses the whole CA bundle: about 30 ms of CPU here. The LLM client is built for
every answer, review and community summary, so each paid that before sending a byte. Both
clients use the defaults (certificates and host names verified, HTTP/1.1 only), nothing
changes a context's certificates or options once built, and OpenSSL shares one context
between connections and threads (each client already did between its own threads); so one
context serves every client of the process. SSL_CERT_FILE and SSL_CERT_DIR are read when the
first client is built, as httpx reads them for each.
"""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The process's verifying TLS context (httpx's defaults: certifi's CA bundle, or the
    files SSL_CERT_FILE / SSL_CERT_DIR name)."""
    return httpx.create_ssl_context()
