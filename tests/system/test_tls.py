"""The TLS context every outgoing client of a process shares (system/tls.py): built once,
and still verifying. Checked against a real HTTPS server on loopback whose certificate no
trusted authority signed: both the LLM client and the crawler's fetcher must refuse it, the
first client built and the ones after it alike."""

from __future__ import annotations

import datetime
import http.server
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ingest.crawler.fetch import Fetcher, FetchError
from system.llm.client import LlmClient, LlmError
from system.tls import shared_ssl_context


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by its own key (no authority vouches for it)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


class _Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.do_POST()

    def do_POST(self) -> None:
        body = b'{"choices": [{"message": {"content": "hello"}}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def untrusted_https(tmp_path) -> Iterator[str]:
    """The base URL of an HTTPS server on loopback with a self-signed certificate."""
    cert, key = self_signed(tmp_path)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_shared_context_is_built_once_and_verifies_certificates_and_host_names():
    context = shared_ssl_context()
    assert shared_ssl_context() is context
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname is True


def test_every_llm_client_refuses_a_certificate_no_authority_signed(untrusted_https):
    for _ in range(2):  # the client that built the context and one that reuses it
        client = LlmClient(base_url=f"{untrusted_https}/v1", model="m", max_retries=0, timeout=5)
        with client, pytest.raises(LlmError) as refused:
            client.chat([{"role": "user", "content": "hi"}])
        assert "certificate" in str(refused.value).lower() or "ssl" in str(refused.value).lower()


def test_every_fetcher_refuses_a_certificate_no_authority_signed(untrusted_https):
    for _ in range(2):
        fetcher = Fetcher(
            user_agent="test",
            timeout=5,
            max_bytes=1_000_000,
            max_redirects=3,
            allowed_networks=["127.0.0.0/8"],
        )
        with fetcher, pytest.raises(FetchError) as refused:
            fetcher.fetch(f"{untrusted_https}/page")
        assert refused.value.reason == "connection_error"
