"""URL normalisation and crawl scope.

A crawler meets the same page under many spellings (`HTTP://Example.com:80/a/./b#top`,
tracking parameters, shuffled query strings). Everything the crawl loop deduplicates,
schedules or stores goes through `normalize_url` first, so one page is one URL. The
function is idempotent: normalising a normalised URL returns it unchanged.
"""

from __future__ import annotations

import ipaddress
import re
import string
from typing import NamedTuple
from urllib.parse import unquote_plus, urljoin, urlsplit

import idna

# Parameters that only say where a visitor came from; they never change the page.
TRACKING_PARAMS = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "msclkid",
        "mc_cid",
        "mc_eid",
        "_ga",
        "yclid",
        "igshid",
        "ref_src",
    }
)

_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
# Characters RFC 3986 allows unescaped in a path / in a query key or value. `&` never occurs
# inside a query component (it separates them), so it is not listed.
_PATH_SAFE = _UNRESERVED | frozenset("!$&'()*+,;=:@/")
_QUERY_SAFE = _UNRESERVED | frozenset("!$'()*+,;=:@/?")
_HEX = frozenset(string.hexdigits)
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?"
_HOSTNAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
# WHATWG URL parsing trims C0 controls and spaces around a URL and drops tabs and newlines
# anywhere in it; browsers follow such hrefs, so the crawler does too.
_TRIMMED = re.compile(r"^[\x00-\x20]+|[\x00-\x20]+$")
_STRIPPED_INSIDE = str.maketrans("", "", "\t\r\n")


class _Parts(NamedTuple):
    scheme: str
    host: str  # IDNA-encoded, lower-case; IPv6 in brackets
    port: int | None  # None when it is the scheme's default
    path: str
    query: str

    @property
    def netloc(self) -> str:
        return self.host if self.port is None else f"{self.host}:{self.port}"

    @property
    def effective_port(self) -> int:
        return self.port if self.port is not None else _DEFAULT_PORTS[self.scheme]


def is_tracking_param(name: str) -> bool:
    """Whether a query parameter (raw, possibly percent-encoded) only tracks the visitor."""
    key = unquote_plus(name).strip().lower()
    return key.startswith("utm_") or key in TRACKING_PARAMS


def normalize_url(url: str, *, base: str | None = None) -> str | None:
    """The canonical spelling of an http(s) URL, or None when it is not one we can crawl."""
    parts = _parse(url, base=base)
    if parts is None:
        return None
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme}://{parts.netloc}{parts.path}{query}"


def site_of(url: str) -> str:
    """The host that defines "the same site": lower-case, IDNA, without a leading `www.`.

    Returns "" for URLs that do not normalise (they belong to no site).
    """
    parts = _parse(url)
    if parts is None:
        return ""
    return parts.host.removeprefix("www.")


def in_scope(url: str, *, root: str, include_subdomains: bool) -> bool:
    """Whether `url` belongs to the site crawled from `root`.

    `www.example.com` and `example.com` are the same site, and so are http and https on
    their default ports (sites redirect between them); an explicit other port is another
    site. With `include_subdomains`, `docs.example.com` belongs to a crawl of `example.com`.
    """
    target, origin = _parse(url), _parse(root)
    if target is None or origin is None:
        return False
    if target.port != origin.port and target.effective_port != origin.effective_port:
        return False
    site, root_site = target.host.removeprefix("www."), origin.host.removeprefix("www.")
    if site == root_site:
        return True
    return include_subdomains and site.endswith("." + root_site)


def path_key(url: str) -> str:
    """Scheme, host and path without the query: the key under which query variants of one
    path are counted (so `/calendar?month=...` cannot spawn pages without end)."""
    parts = _parse(url)
    if parts is None:
        return url
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def _parse(url: str, *, base: str | None = None) -> _Parts | None:
    text = _TRIMMED.sub("", url).translate(_STRIPPED_INSIDE)
    try:
        if base is not None:
            text = urljoin(_TRIMMED.sub("", base).translate(_STRIPPED_INSIDE), text)
        split = urlsplit(text)
        scheme = split.scheme.lower()
        if scheme not in _DEFAULT_PORTS:
            return None
        port = split.port  # raises ValueError when not a number in range
        raw_host = split.hostname
    except ValueError:
        return None
    if not raw_host:
        return None
    host = _normalize_host(raw_host)
    if host is None:
        return None
    if port == _DEFAULT_PORTS[scheme]:
        port = None
    path = _remove_dot_segments(_normalize_escapes(split.path, _PATH_SAFE)) or "/"
    if not path.startswith("/"):
        path = "/" + path
    return _Parts(scheme, host, port, path, _normalize_query(split.query))


def _normalize_host(host: str) -> str | None:
    host = host.strip().rstrip(".").lower()
    if not host or "%" in host:
        return None
    if ":" in host:
        try:
            return f"[{ipaddress.IPv6Address(host).compressed}]"
        except ValueError:
            return None
    try:
        return str(ipaddress.IPv4Address(host))
    except ValueError:
        pass
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except idna.IDNAError:
            try:
                # IDNA 2003 still accepts some names (emoji domains) that IDNA 2008 refuses.
                host = host.encode("idna").decode("ascii")
            except UnicodeError:
                return None
    return host if _HOSTNAME.fullmatch(host) else None


def _normalize_escapes(text: str, safe: frozenset[str]) -> str:
    """Decode escapes of unreserved characters, upper-case the others, escape what must be."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "%" and text[i + 1 : i + 3] and set(text[i + 1 : i + 3]) <= _HEX:
            escaped = text[i + 1 : i + 3]
            decoded = chr(int(escaped, 16))
            out.append(decoded if decoded in _UNRESERVED else "%" + escaped.upper())
            i += 3
            continue
        if char in safe:
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8", "replace"))
        i += 1
    return "".join(out)


def _remove_dot_segments(path: str) -> str:
    if "." not in path:
        return path
    segments = path.split("/")
    kept: list[str] = []
    for segment in segments:
        if segment == "..":
            if len(kept) > 1:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    if segments[-1] in (".", ".."):
        kept.append("")
    return "/".join(kept)


def _normalize_query(query: str) -> str:
    params: list[tuple[str, str]] = []
    for piece in query.split("&"):
        if not piece:
            continue
        key, sep, value = piece.partition("=")
        if is_tracking_param(key):
            continue
        key = _normalize_escapes(key, _QUERY_SAFE - {"="})
        params.append((key, key + sep + _normalize_escapes(value, _QUERY_SAFE)))
    # Sorted by key only and stably: the order of repeated keys (`a=2&a=1`) can matter.
    params.sort(key=lambda param: param[0])
    return "&".join(spelled for _, spelled in params)
