"""A real OpenAI-compatible chat-completions server on 127.0.0.1 with scripted replies.

The LLM client, the LLM extractor and the extraction benchmark must be exercised against
real HTTP: real sockets, keep-alive, concurrency, timeouts, status codes and malformed
bodies are exactly where such clients break, and a mocked transport would hide all of it.
This is a plain `http.server` in a background thread (standard library only, like
tests/ingest/crawl_site.py) that answers `POST /v1/chat/completions` with replies taken
from a script, in order of arrival, and `GET /v1/models` with one model. Every request is
recorded, so tests assert on what the client actually sent.

    with ScriptedLLM() as llm:
        llm.script(Reply(status=429, headers={"Retry-After": "1"}), Reply("hello"))
        client = LlmClient(base_url=llm.base_url, model="m")
        assert client.chat([{"role": "user", "content": "hi"}]).content == "hello"
        assert len(llm.chat_requests) == 2

When the script runs out, `responder(body)` decides the reply (by default "<|DONE|>").
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.background_server import BackgroundServer

DEFAULT_MODEL = "scripted-model"
DONE = "<|DONE|>"
# A hanging reply waits at most this long for stop(), so a forgotten server cannot keep a
# handler thread alive for the rest of the test session.
HANG_SECONDS = 60.0

_ERROR_TYPES = {
    400: ("invalid_request_error", "invalid_request"),
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_error", "forbidden"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
    529: ("overloaded_error", "overloaded"),
}


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer.

    `body` (raw bytes) replaces the generated JSON entirely, while `status` and `headers`
    still apply: that is how tests send HTML error pages or truncated JSON. `delay` of
    None means "use the server's `default_delay`"; an explicit 0.0 answers at once even
    when a default delay is set. `hang` never answers (until the server stops, at most
    `HANG_SECONDS`), for timeout tests; `disconnect` closes the connection without a
    word, for connection-error tests.
    """

    content: str = ""
    status: int = 200
    delay: float | None = None
    headers: dict[str, str] | None = None
    body: bytes | None = None
    usage: tuple[int, int] | None = None  # (prompt_tokens, completion_tokens)
    hang: bool = False
    finish_reason: str = "stop"
    disconnect: bool = False
    # Streamed replies (a request with `stream: true`): seconds between content pieces.
    piece_delay: float = 0.0


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    path: str  # as sent, with any query
    headers: dict[str, str]  # lower-case names
    body: Any  # the parsed JSON, or None when the body was empty or not JSON
    raw: bytes
    received_at: float  # time.monotonic() when the request line and headers had arrived
    method: str = "POST"

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages sent, or [] when the body had none."""
        if isinstance(self.body, dict) and isinstance(self.body.get("messages"), list):
            return self.body["messages"]
        return []


def done_responder(body: dict[str, Any]) -> Reply:
    """The default fallback: the completion delimiter the extraction prompts ask for."""
    return Reply(content=DONE)


class _Server(ThreadingHTTPServer):
    # Daemon handler threads: one hanging or sleeping in a delay must not block stop(), and
    # idle keep-alive connections must not keep the interpreter alive.
    daemon_threads = True
    # The benchmark opens many connections at once; the default backlog of 5 would make
    # the kernel drop SYNs and turn a concurrency test into a retransmission-timer test.
    request_queue_size = 128
    llm: ScriptedLLM

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hanging up mid-answer (timeouts, size limits) are the point of tests


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 keeps connections alive, so a client's pool is exercised as in production;
    # every answer therefore carries an exact Content-Length.
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; without TCP_NODELAY, Nagle's algorithm
    # and the client's delayed ACK add ~40 ms to every answer (real servers set it too).
    disable_nagle_algorithm = True
    timeout = 30  # idle keep-alive connections give their thread back eventually
    server: _Server

    def do_POST(self) -> None:
        self.server.llm._handle(self)

    def do_GET(self) -> None:
        self.server.llm._handle(self)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class ScriptedLLM(BackgroundServer):
    """The fake LLM server. Thread-safe: requests are handled concurrently."""

    def __init__(self, *, model: str = DEFAULT_MODEL, default_delay: float = 0.0) -> None:
        super().__init__(name="scripted-llm")
        self.model = model
        self.default_delay = default_delay
        # Called, from handler threads, when the script is empty; must be thread-safe.
        self.responder: Callable[[dict[str, Any]], Reply] = done_responder
        self._script: collections.deque[Reply] = collections.deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        # Bound now, so base_url is known before start().
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.llm = self

    # --- lifecycle ---------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The API base as OpenAI SDKs expect it, including /v1."""
        return f"http://127.0.0.1:{self.port}/v1"

    # --- scripting and inspection ------------------------------------------------------

    def script(self, *replies: Reply | str) -> None:
        """Queue replies, answered in order of arrival; a str is `Reply(content=str)`."""
        with self._lock:
            self._script.extend(Reply(content=r) if isinstance(r, str) else r for r in replies)

    @property
    def pending(self) -> int:
        """Scripted replies not yet used."""
        with self._lock:
            return len(self._script)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order of arrival (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.split("?", 1)[0].endswith("/chat/completions")]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    # --- serving -----------------------------------------------------------------------

    def _handle(self, handler: _Handler) -> None:
        received_at = time.monotonic()
        try:
            raw = self._read_body(handler)
            if raw is None:
                return
            body: Any
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            record = RecordedRequest(
                path=handler.path,
                headers={k.lower(): v for k, v in handler.headers.items()},
                body=body,
                raw=raw,
                received_at=received_at,
                method=handler.command,
            )
            with self._lock:
                self._requests.append(record)
            route = handler.path.split("?", 1)[0].rstrip("/")
            if handler.command == "GET" and route == "/v1/models":
                self._send_json(handler, 200, self._models())
            elif handler.command == "POST" and route == "/v1/chat/completions":
                self._answer_chat(handler, body)
            else:
                self._send_json(handler, 404, _error(404, f"No route for {handler.path}"))
        except OSError:  # the client hung up or timed out: nothing left to answer
            handler.close_connection = True

    def _read_body(self, handler: _Handler) -> bytes | None:
        length = handler.headers.get("Content-Length")
        if length is None:
            if handler.command == "POST":
                # No chunked decoding here: a client that sends none of this is not what
                # the project's client does, and answering 411 says so plainly.
                self._send_json(handler, 411, _error(411, "Content-Length required"))
                handler.close_connection = True
                return None
            return b""
        return handler.rfile.read(int(length))

    def _answer_chat(self, handler: _Handler, body: Any) -> None:
        if not isinstance(body, dict):
            self._send_json(handler, 400, _error(400, "The request body is not a JSON object."))
            return
        with self._lock:
            reply = self._script.popleft() if self._script else None
        if reply is None:
            reply = self.responder(body)
        if reply.hang:
            self._stopping.wait(HANG_SECONDS)
            handler.close_connection = True
            return
        delay = self.default_delay if reply.delay is None else reply.delay
        if delay > 0 and self._stopping.wait(delay):
            handler.close_connection = True  # stopping: drop the connection, answer nothing
            return
        if reply.disconnect:
            handler.close_connection = True
            return
        if reply.body is None and reply.status == 200 and body.get("stream") is True:
            self._stream(handler, body, reply)
            return
        if reply.body is not None:
            payload = reply.body
        elif reply.status == 200:
            payload = json.dumps(self._completion(body, reply)).encode()
        else:
            message = reply.content or _phrase(reply.status)
            payload = json.dumps(_error(reply.status, message)).encode()
        self._send(handler, reply.status, payload, reply.headers or {})

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        if reply.usage is not None:
            prompt_tokens, completion_tokens = reply.usage
        else:
            messages = body.get("messages")
            prompt_chars = sum(
                len(m.get("content") or "")
                for m in (messages if isinstance(messages, list) else [])
                if isinstance(m, dict) and isinstance(m.get("content") or "", str)
            )
            prompt_tokens = max(1, prompt_chars // 4)
            completion_tokens = max(1, len(reply.content) // 4)
        model = body.get("model")
        return {
            "id": f"chatcmpl-scripted-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model if isinstance(model, str) and model else self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _stream(self, handler: _Handler, body: dict[str, Any], reply: Reply) -> None:
        """The reply as server-sent events, a word at a time, as OpenAI streams it: role,
        content deltas, the finish reason, then usage, then `[DONE]`; the connection closes
        after it (no Content-Length for a stream)."""
        document = self._completion(body, reply)
        base = {k: document[k] for k in ("id", "created", "model")}
        base["object"] = "chat.completion.chunk"
        pieces = re.findall(r"\s*\S+|\s+", reply.content)
        chunks: list[dict[str, Any]] = [{"index": 0, "delta": {"role": "assistant"}}]
        chunks += [{"index": 0, "delta": {"content": piece}} for piece in pieces]
        chunks.append({"index": 0, "delta": {}, "finish_reason": reply.finish_reason})
        handler.send_response(200, "OK")
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Connection", "close")
        for name, value in (reply.headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.close_connection = True
        for n, choice in enumerate(chunks):
            if n > 1 and reply.piece_delay > 0 and self._stopping.wait(reply.piece_delay):
                return
            event = {**base, "choices": [choice]}
            handler.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            handler.wfile.flush()
        usage = {**base, "choices": [], "usage": document["usage"]}
        handler.wfile.write(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())
        handler.wfile.flush()

    def _models(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [{"id": self.model, "object": "model", "created": 0, "owned_by": "scripted"}],
        }

    def _send_json(self, handler: _Handler, status: int, document: dict[str, Any]) -> None:
        self._send(handler, status, json.dumps(document).encode(), {})

    def _send(self, handler: _Handler, status: int, payload: bytes, extra: dict[str, str]) -> None:
        # Case-insensitive merge, so a test's "content-type" replaces ours instead of
        # producing two Content-Type headers.
        headers = {"content-type": ("Content-Type", "application/json")}
        for name, value in extra.items():
            headers[name.lower()] = (name, value)
        headers["content-length"] = ("Content-Length", str(len(payload)))
        handler.send_response(status, _phrase(status))
        for name, value in headers.values():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(payload)
        handler.wfile.flush()


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Site Overloaded" if status == 529 else "Unknown"


def _error(status: int, message: str) -> dict[str, Any]:
    """The OpenAI error shape."""
    kind, code = _ERROR_TYPES.get(
        status,
        ("server_error", "server_error") if status >= 500 else ("invalid_request_error", None),
    )
    return {"error": {"message": message, "type": kind, "code": code}}


# --- A model that "knows" a small world, for tests and benchmarks ------------------------

WINDOW_TEXT = re.compile(r"-----BEGIN TEXT-----\n(.*)\n-----END TEXT-----", re.DOTALL)


def window_text(body: dict[str, Any]) -> str:
    """The document text inside an extraction request (knowledge/prompts/*/extract.txt)."""
    for message in body.get("messages", []):
        found = WINDOW_TEXT.search(str(message.get("content", "")))
        if found:
            return found.group(1)
    return ""


def is_glean(body: dict[str, Any]) -> bool:
    """A gleaning turn resends the conversation: more than system + first user message."""
    return len(body.get("messages", [])) > 2


@dataclass
class World:
    """A responder that knows some entities and relations and reports those present in the
    window it is asked about, as a perfect model would; gleaning turns answer DONE."""

    entities: dict[str, str] = field(default_factory=dict)  # name -> type
    relations: list[tuple[str, str, str]] = field(default_factory=list)

    def reply_for(self, text: str) -> str:
        lines = [
            f'("entity"<|>{name}<|>{kind}<|>{name} as described in the text.)'
            for name, kind in self.entities.items()
            if name in text
        ]
        lines += [
            f'("relationship"<|>{s}<|>{t}<|>{kind}<|>{s} {kind} {t}.<|>{kind}<|>8)'
            for s, t, kind in self.relations
            if s in text and t in text
        ]
        return "\n".join([*lines, "<|COMPLETE|>"])

    def __call__(self, body: dict[str, Any]) -> Reply:
        if is_glean(body):
            return Reply(content=DONE)
        return Reply(content=self.reply_for(window_text(body)))


def main() -> None:
    """Serve from its own process (benchmarks: the server must not share our GIL).

    python tests/llm_server.py --delay 0.2 --responder bench.extract_world:WORLD
    Prints the base URL on the first line of stdout, then serves until terminated.
    """
    import argparse
    import importlib
    import signal

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--responder", default="", help="module:attribute")
    args = parser.parse_args()
    server = ScriptedLLM(default_delay=args.delay)
    if args.responder:
        module, _, attribute = args.responder.partition(":")
        server.responder = getattr(importlib.import_module(module), attribute)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with server:
        print(server.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()


if __name__ == "__main__":
    main()
