"""`/mcp/`: the MCP server over streamable HTTP, inside the ordinary (WSGI) Django stack.

The SDK's streamable-HTTP transport is an ASGI app. Here it runs in its **stateless** mode
with JSON responses: every POST is one complete JSON-RPC exchange, so nothing outlives the
request and any gunicorn worker can answer any request. The view authenticates the bearer
token (the API's lookup; cookies and sessions are ignored, so no CSRF either), builds the
server for that token's workspace and role, and runs the SDK's ASGI app for this one
request with asgiref (`async_to_sync`), whose thread-sensitive calls bring the tools back
into this request's thread and its database connection. GET (a server-to-client event
stream) and DELETE (ending a session) have nothing to do without sessions: 405.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio
from asgiref.sync import async_to_sync
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from agents.access import InvalidToken, access_for_token
from agents.server import build_server
from workspaces.errors import NotFound

if TYPE_CHECKING:
    from starlette.types import Message  # the SDK's ASGI types (it runs on starlette)

# Headers the SDK never needs and should never see: the credentials stay here.
_PRIVATE_HEADERS = {"authorization", "cookie"}


def _error(status: int, message: str, *, headers: dict[str, str] | None = None) -> HttpResponse:
    """A JSON-RPC error (invalid request, no id) refused before the MCP server sees it."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    response = HttpResponse(json.dumps(body), status=status, content_type="application/json")
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def _bearer(request: HttpRequest) -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


def _foreign_origin(request: HttpRequest) -> bool:
    """A browser page of another site (DNS rebinding, cross-site requests) is refused."""
    origin = request.headers.get("Origin")
    return bool(origin) and urlsplit(origin).netloc != request.get_host()


@csrf_exempt
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _error(
            405,
            "Stateless server: send each JSON-RPC message as a POST.",
            headers={"Allow": "POST"},
        )
    if _foreign_origin(request):
        return _error(403, "Requests from another origin are refused.")
    plaintext = _bearer(request)
    unauthenticated = {"WWW-Authenticate": 'Bearer realm="graphloom"'}
    if plaintext is None:
        return _error(401, "Authentication required: send Authorization: Bearer <token>.",
                      headers=unauthenticated)  # fmt: skip
    try:
        access = access_for_token(
            plaintext, transport="http", base_url=f"{request.scheme}://{request.get_host()}"
        )
    except (InvalidToken, NotFound) as exc:
        return _error(401, str(exc), headers=unauthenticated)
    try:
        body = request.body
    except RequestDataTooBig:
        return _error(413, "The request body is too large.")
    status, headers, content = async_to_sync(exchange)(build_server(access), _scope(request), body)
    response = HttpResponse(content, status=status)
    for name, value in headers:
        if name.lower() != "content-length":
            response[name] = value
    return response


def _scope(request: HttpRequest) -> dict[str, Any]:
    host, _, port = request.get_host().partition(":")
    headers = [
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in request.headers.items()
        if name.lower() not in _PRIVATE_HEADERS
    ]
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode(),
        "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "headers": headers,
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "server": (host, int(port) if port.isdigit() else 80),
    }


async def exchange(
    server: Server[Any], scope: dict[str, Any], body: bytes
) -> tuple[int, list[tuple[str, str]], bytes]:
    """Run the SDK's stateless streamable-HTTP app for one request: (status, headers, body)."""
    delivered = False
    finished = anyio.Event()
    status = 500
    headers: list[tuple[str, str]] = []
    parts: list[bytes] = []

    async def receive() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await finished.wait()  # the client "disconnects" once the answer is complete
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            headers.extend(
                (name.decode("latin-1"), value.decode("latin-1"))
                for name, value in message["headers"]
            )
        elif message["type"] == "http.response.body":
            parts.append(message.get("body", b""))
            if not message.get("more_body", False):
                finished.set()

    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)
    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return status, headers, b"".join(parts)
