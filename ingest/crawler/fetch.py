"""An HTTP client for crawling that cannot be turned against the server's own network.

A crawl follows URLs written by strangers: links, sitemaps, redirects. Without a guard,
`http://169.254.169.254/` or a hostname resolving to `127.0.0.1` would make Graphloom read
its own cloud metadata or admin ports and store the answer as a document (SSRF). The guard
therefore sits where the socket is opened: every connection, including every redirect hop,
resolves its host once, refuses if any address is non-public, and connects to the address
it vetted, so DNS rebinding between the check and the connect is impossible.

Beyond that the fetcher bounds everything a hostile server controls: redirects, body size
(counted after decompression) and total time, including servers that trickle bytes.
"""

from __future__ import annotations

import email.utils
import ipaddress
import math
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self
from urllib.parse import urldefrag, urljoin

import httpcore
import httpx

from system.tls import shared_ssl_context

type IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
type IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

SSRF_REFUSED = "ssrf_refused"
BAD_SCHEME = "bad_scheme"
TIMEOUT = "timeout"
TOO_LARGE = "too_large"
TOO_MANY_REDIRECTS = "too_many_redirects"
REDIRECT_LOOP = "redirect_loop"
CONNECTION_ERROR = "connection_error"
INVALID_URL = "invalid_url"

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_RETRY_AFTER_STATUSES = frozenset({429, 503})
_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5"

# Cloud metadata endpoints; already refused as link-local / unique-local, named here so the
# refusal message says what was at stake.
_METADATA = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")

# The end of the current `fetch` call, per thread: the connection pool shares sockets between
# threads, but a read always happens in the thread whose fetch is waiting for it.
_deadline = threading.local()


class FetchError(Exception):
    """A fetch that produced no HTTP response worth keeping.

    `reason` is a stable code (`ssrf_refused`, `bad_scheme`, `timeout`, `too_large`,
    `too_many_redirects`, `redirect_loop`, `connection_error`, `invalid_url`); `message`
    says, for people, which URL or address and why.
    """

    def __init__(self, reason: str, message: str = "", *, url: str | None = None) -> None:
        self.reason = reason
        self.message = message or reason
        self.url = url
        super().__init__(self.message)


@dataclass(frozen=True)
class FetchResult:
    url: str
    status: int
    headers: dict[str, str]
    content: bytes
    content_type: str
    redirects: list[str] = field(default_factory=list)
    elapsed: float = 0.0
    etag: str | None = None
    last_modified: str | None = None
    not_modified: bool = False
    retry_after: float | None = None


def refusal_reason(ip: IPAddress) -> str | None:
    """Why connecting to `ip` could reach a non-public network, or None for public addresses."""
    embedded = _embedded_ipv4(ip)
    if embedded is not None:
        why = refusal_reason(embedded)
        return f"{why} embedded in an IPv6 address" if why else None
    if ip in _METADATA:
        return "cloud metadata address"
    checks = (
        (ip.is_unspecified, "unspecified address"),
        (ip.is_loopback, "loopback address"),
        (ip.is_link_local, "link-local address"),
        (ip.is_multicast, "multicast address"),
        (ip.is_private, "private address"),
        (ip.is_reserved, "reserved address"),
        (not ip.is_global, "non-public address"),
    )
    return next((why for refused, why in checks if refused), None)


def _embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, 6to4, NAT64), if any."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def parse_networks(networks: Iterable[str]) -> tuple[IPNetwork, ...]:
    """CIDR strings as networks; a bare address is a one-address network."""
    return tuple(ipaddress.ip_network(n.strip(), strict=False) for n in networks if n.strip())


def check_address(ip: IPAddress, allowed: Sequence[IPNetwork]) -> str | None:
    """Why `ip` is refused given the explicitly allowed networks, or None if it may be used."""
    if any(ip.version == net.version and ip in net for net in allowed):
        return None
    return refusal_reason(ip)


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header (delta-seconds or HTTP-date)."""
    if not value or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _bounded(timeout: float | None, error: type[Exception]) -> float | None:
    """`timeout` shortened to what is left of the current fetch's total deadline."""
    at: float | None = getattr(_deadline, "at", None)
    if at is None:
        return timeout
    remaining = at - time.monotonic()
    if remaining <= 0:
        raise error("the fetch's total time limit was reached")
    return remaining if timeout is None else min(timeout, remaining)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every read and write stops at the fetch's total deadline, so a
    server sending one byte per second cannot hold a crawl worker for ever."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, bounded))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class GuardedBackend(httpcore.SyncBackend):
    """The network backend every crawler connection goes through: resolve once, vet every
    address, connect to a vetted address. TLS still verifies and sends SNI for the original
    hostname, because httpcore takes `server_hostname` from the request's origin."""

    def __init__(self, allowed_networks: Sequence[IPNetwork] = ()) -> None:
        self.allowed_networks = tuple(allowed_networks)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = self.resolve(host, port)
        options = list(socket_options or [])
        last_error: Exception | None = None
        for address in addresses:
            try:
                stream = super().connect_tcp(
                    address,
                    port,
                    _bounded(timeout, httpcore.ConnectTimeout),
                    local_address,
                    options,
                )
            except httpcore.ConnectError as exc:  # try the host's next address
                last_error = exc
                continue
            return _DeadlineStream(stream)
        raise last_error or httpcore.ConnectError(f"no address to connect to for {host}")

    def resolve(self, host: str, port: int) -> list[str]:
        """The host's addresses, all vetted; refuses the host if any one is not allowed
        (a name resolving to both a public and a private address must not be reachable by
        retrying until the private one comes first)."""
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise httpcore.ConnectError(f"could not resolve {host}: {exc}") from exc
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        for address in addresses:
            ip = ipaddress.ip_address(address)
            why = check_address(ip, self.allowed_networks)
            if why:
                shown = host if host == address else f"{host} ({address})"
                raise FetchError(SSRF_REFUSED, f"refused to connect to {shown}: {why}")
        return addresses


class Fetcher:
    """Fetches URLs for the crawler; one instance is shared by all crawl threads."""

    def __init__(
        self,
        *,
        user_agent: str,
        timeout: float,
        max_bytes: int,
        max_redirects: int,
        allowed_networks: Sequence[str] = (),
    ) -> None:
        self.user_agent = user_agent
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.allowed_networks = parse_networks(allowed_networks)
        ssl_context = shared_ssl_context()  # built once per process (system/tls.py)
        transport = httpx.HTTPTransport(verify=ssl_context)
        # httpx has no public hook for the network backend; the pool it builds is replaced by
        # an identical one that connects through the guard. `trust_env=False` on the client
        # keeps environment proxies, which would connect on our behalf, out of the picture.
        transport._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context,
            max_connections=100,
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=GuardedBackend(self.allowed_networks),
        )
        self._client = httpx.Client(
            transport=transport,
            follow_redirects=False,
            trust_env=False,
            timeout=httpx.Timeout(timeout),
            headers={"User-Agent": user_agent, "Accept": _ACCEPT},
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def fetch(
        self,
        url: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        before_request: Callable[[str], object] | None = None,
    ) -> FetchResult:
        """GET `url`, following redirects through the guard. HTTP errors (4xx, 5xx) are
        results; everything that yields no usable response raises `FetchError`.

        `before_request(url)` runs before every request, redirect hops included: the crawler
        waits for its per-host rate limit there. Time spent in it does not count against
        the timeout."""
        started = time.monotonic()
        _deadline.at = started + self.timeout
        try:
            return self._fetch(
                url,
                etag=etag,
                last_modified=last_modified,
                started=started,
                before_request=before_request,
            )
        finally:
            _deadline.at = None

    def _fetch(
        self,
        url: str,
        *,
        etag: str | None,
        last_modified: str | None,
        started: float,
        before_request: Callable[[str], object] | None,
    ) -> FetchResult:
        headers: dict[str, str] = {}
        # Validators are echoed from earlier responses; one a server spelled with non-ASCII
        # bytes cannot be sent back, and a plain GET is the right fallback.
        if etag and etag.isascii():
            headers["If-None-Match"] = etag
        if last_modified and last_modified.isascii():
            headers["If-Modified-Since"] = last_modified
        current = self._check_url(url)
        chain: list[str] = []
        while True:
            if before_request is not None:
                waited = time.monotonic()
                before_request(current)
                if _deadline.at is not None:
                    _deadline.at += time.monotonic() - waited
            response = self._send(current, headers)
            try:
                location = response.headers.get("location", "").strip()
                if response.status_code in REDIRECT_STATUSES and location:
                    chain.append(current)
                    target = self._check_url(urljoin(current, location), via=current)
                    if target in chain:
                        raise FetchError(
                            REDIRECT_LOOP,
                            f"{url}: redirect loop, {current} leads back to {target}",
                            url=url,
                        )
                    if len(chain) > self.max_redirects:
                        raise FetchError(
                            TOO_MANY_REDIRECTS,
                            f"{url}: more than {self.max_redirects} redirects",
                            url=url,
                        )
                    current = target
                    continue
                content = self._read_body(response, current)
            finally:
                response.close()
            return self._result(response, current, content, chain, started)

    def _check_url(self, url: str, *, via: str | None = None) -> str:
        """Refuse what can be refused before connecting: other schemes, literal bad IPs."""
        url = urldefrag(url)[0]
        context = f" (redirected from {via})" if via else ""
        try:
            parsed = httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise FetchError(INVALID_URL, f"{url}{context}: {exc}", url=url) from exc
        if parsed.scheme not in ("http", "https"):
            raise FetchError(
                BAD_SCHEME, f"{url}{context}: only http and https are fetched", url=url
            )
        if not parsed.host:
            raise FetchError(INVALID_URL, f"{url}{context}: no host", url=url)
        try:
            ip = ipaddress.ip_address(parsed.host)
        except ValueError:
            return url
        why = check_address(ip, self.allowed_networks)
        if why:
            raise FetchError(SSRF_REFUSED, f"{url}{context}: refused {ip}, {why}", url=url)
        return url

    def _send(self, url: str, headers: dict[str, str]) -> httpx.Response:
        try:
            request = self._client.build_request("GET", url, headers=headers)
            return self._client.send(request, stream=True)
        except FetchError as exc:
            raise FetchError(exc.reason, f"{url}: {exc.message}", url=url) from exc
        except Exception as exc:
            raise _translate(exc, url) from exc

    def _read_body(self, response: httpx.Response, url: str) -> bytes:
        announced = response.headers.get("content-length", "")
        if announced.isdigit() and int(announced) > self.max_bytes:
            raise FetchError(
                TOO_LARGE,
                f"{url}: announces {int(announced)} bytes, the limit is {self.max_bytes}",
                url=url,
            )
        chunks: list[bytes] = []
        size = 0
        try:
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > self.max_bytes:
                    raise FetchError(
                        TOO_LARGE, f"{url}: body exceeds {self.max_bytes} bytes", url=url
                    )
                chunks.append(chunk)
        except FetchError:
            raise
        except Exception as exc:
            raise _translate(exc, url) from exc
        return b"".join(chunks)

    def _result(
        self,
        response: httpx.Response,
        url: str,
        content: bytes,
        chain: list[str],
        started: float,
    ) -> FetchResult:
        headers = {key.lower(): value for key, value in response.headers.items()}
        status = response.status_code
        media_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        retry_after = None
        if status in _RETRY_AFTER_STATUSES:
            retry_after = parse_retry_after(headers.get("retry-after"))
        return FetchResult(
            url=url,
            status=status,
            headers=headers,
            content=content,
            content_type=media_type,
            redirects=chain,
            elapsed=time.monotonic() - started,
            etag=headers.get("etag"),
            last_modified=headers.get("last-modified"),
            not_modified=status == 304,
            retry_after=retry_after,
        )


def _translate(exc: Exception, url: str) -> FetchError:
    """httpx's exceptions as FetchError reasons."""
    if isinstance(exc, FetchError):
        return FetchError(exc.reason, f"{url}: {exc.message}", url=url)
    if isinstance(exc, httpx.TimeoutException):
        return FetchError(TIMEOUT, f"{url}: timed out ({exc})", url=url)
    if isinstance(exc, httpx.UnsupportedProtocol):
        return FetchError(BAD_SCHEME, f"{url}: {exc}", url=url)
    if isinstance(exc, httpx.InvalidURL):
        return FetchError(INVALID_URL, f"{url}: {exc}", url=url)
    if isinstance(exc, httpx.DecodingError):
        return FetchError(CONNECTION_ERROR, f"{url}: undecodable body ({exc})", url=url)
    if isinstance(exc, httpx.HTTPError):
        return FetchError(CONNECTION_ERROR, f"{url}: {exc or type(exc).__name__}", url=url)
    raise exc
