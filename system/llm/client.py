"""The chat client every LLM caller talks to (extraction, review, answers, community
summaries): any OpenAI-compatible chat-completions API.

One small synchronous client instead of a vendor SDK, because what matters here is what
the SDKs hide: Graphloom runs extraction from worker threads against whatever the user
points it at (OpenAI, a hosted gateway, vLLM, Ollama, llama.cpp), and a long extraction
must survive rate limits, overloaded servers, dropped connections, gateways answering 200
with an HTML page, and slow models, then fail with a message the user can act on. So:

- `base_url` is the full API base as OpenAI SDKs expect it (`https://api.openai.com/v1`,
  `http://localhost:11434/v1`); the client appends `/chat/completions` and adds nothing
  else, because some gateways do not use `/v1` and guessing would break them.
- Retries with exponential backoff and full jitter on 429, 5xx-overload statuses,
  connection errors, timeouts and malformed 200 bodies; `Retry-After` is honoured.
  Other 4xx answers are the caller's mistake and fail at once.
- Response bodies are capped (4 MB), so a misbehaving server cannot exhaust memory.
- The API key is sent only as a bearer token and never appears in an error message.

Thread-safe: one `LlmClient` (one pooled `httpx.Client`) is shared by all worker threads.
Nothing is read at import time; `LlmClient.from_settings()` reads the LLM_* settings when
called, from the settings module only (config/settings/base.py declares and documents each).
"""

from __future__ import annotations

import email.utils
import http
import importlib.metadata
import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self, TypeGuard

import httpx

from system.llm.availability import configured_base_url, configured_model
from system.tls import shared_ssl_context

MAX_RESPONSE_BYTES = 4 * 1024 * 1024
# Statuses that mean "busy or briefly broken, try again"; 529 is the "overloaded" status
# some providers use.
RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504, 529})
_ERROR_DETAIL_CHARS = 300


def _version() -> str:
    try:
        return importlib.metadata.version("graphloom")
    except importlib.metadata.PackageNotFoundError:  # running from a bare checkout
        return "0.0.0"


USER_AGENT = f"Graphloom/{_version()}"


def estimate_tokens(text: str) -> int:
    """A provider-neutral token estimate: characters / 4, rounded up, at least 1."""
    return max(1, math.ceil(len(text) / 4))


@dataclass(frozen=True, slots=True)
class ChatUsage:
    prompt_tokens: int
    completion_tokens: int
    # True when the server reported no usage and the counts are `estimate_tokens` guesses.
    estimated: bool = False


@dataclass(frozen=True, slots=True)
class ChatReply:
    content: str
    usage: ChatUsage
    model: str  # as the server named it (it may resolve an alias), else the requested one
    finish_reason: str  # "stop", "length" (hit max_tokens), ...; "" when not reported
    duration_ms: int  # the whole call as the caller waited for it: attempts and backoff
    attempts: int
    retries: tuple[str, ...]  # one line per failed attempt, e.g. "429 Too Many Requests, ..."


class LlmError(Exception):
    """A chat call that produced no usable reply; `str()` is a one-line, actionable message.

    `retryable` says whether the failure was of the transient kind (then the retries were
    used up); a caller may, for instance, pause a whole extraction on a retryable failure
    but stop it on a non-retryable one (wrong key, unknown model).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        attempts: int = 0,
        retries: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retryable = retryable
        self.attempts = attempts
        self.retries = retries

    def __str__(self) -> str:
        return self.message


class LlmNotConfigured(LlmError):
    """LLM_BASE_URL or LLM_MODEL is missing (or the base URL is not an http(s) URL)."""


class _Failure(Exception):
    """One failed attempt, before the client decides whether to try again."""

    def __init__(
        self,
        kind: str,
        summary: str,
        *,
        detail: str = "",
        status: int | None = None,
        retryable: bool,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(summary)
        self.kind = kind  # "status", "timeout", "connection", "malformed", "too_large"
        self.summary = summary  # short, for ChatReply.retries / LlmError.retries
        self.detail = detail
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class LlmClient:
    """A thread-safe client for one model at one OpenAI-compatible endpoint."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str = "",
        timeout: float = 60.0,
        temperature: float = 0.0,
        max_tokens: int = 2000,
        max_retries: int = 4,
        retry_base_delay: float = 1.0,
        retry_max_delay: float = 30.0,
        sleep: Callable[[float], object] = time.sleep,
        max_connections: int = 16,
    ) -> None:
        base_url = base_url.strip().rstrip("/")
        if not base_url.startswith(("http://", "https://")):
            raise LlmNotConfigured(
                f"LLM_BASE_URL must be an http(s) URL such as https://api.openai.com/v1, "
                f"got {base_url!r}"
            )
        if not model.strip():
            raise LlmNotConfigured("LLM_MODEL is empty: name the model to use")
        self.base_url = base_url
        self.model = model.strip()
        self.timeout = timeout
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_retries = max(0, max_retries)
        self.retry_base_delay = retry_base_delay
        self.retry_max_delay = retry_max_delay
        self.endpoint = f"{base_url}/chat/completions"
        # What messages show: without any user:password@ a URL may carry.
        self._shown_base = _without_userinfo(base_url)
        self._shown_endpoint = f"{self._shown_base}/chat/completions"
        self._api_key = api_key.strip()
        self._sleep = sleep
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        self._client = httpx.Client(
            headers=headers,
            verify=shared_ssl_context(),  # built once per process (system/tls.py)
            # connect/read/write each bounded by `timeout`; waiting for a free pooled
            # connection is not (pool=None): that is queueing behind our own threads, whose
            # requests are bounded themselves, not a slow server.
            timeout=httpx.Timeout(timeout, pool=None),
            limits=httpx.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections
            ),
            follow_redirects=False,  # a redirect means a wrong base URL; say so instead
        )

    @classmethod
    def from_settings(cls, **overrides: Any) -> LlmClient:
        """A client configured by the LLM_* settings; keyword arguments override them."""
        from django.conf import settings

        base_url, model = configured_base_url(), configured_model()
        missing = [
            name
            for name, value in (("LLM_BASE_URL", base_url), ("LLM_MODEL", model))
            if not value and name.lower().removeprefix("llm_") not in overrides
        ]
        if missing:
            raise LlmNotConfigured(
                f"No LLM is configured: set {' and '.join(missing)} "
                "(e.g. LLM_BASE_URL=https://api.openai.com/v1, LLM_MODEL=gpt-4o-mini)"
            )
        options: dict[str, Any] = {
            "base_url": base_url,
            "model": model,
            "api_key": str(settings.LLM_API_KEY or ""),
            "timeout": float(settings.LLM_TIMEOUT),
            "temperature": float(settings.LLM_TEMPERATURE),
            "max_tokens": int(settings.LLM_MAX_TOKENS),
            "max_retries": int(settings.LLM_MAX_RETRIES),
            "retry_base_delay": float(settings.LLM_RETRY_BASE_DELAY),
            "retry_max_delay": float(settings.LLM_RETRY_MAX_DELAY),
        }
        options.update(overrides)
        return cls(**options)

    # --- lifecycle ---------------------------------------------------------------------

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def describe(self) -> str:
        """The model and where it is served ("m at http://host/v1"), for messages."""
        return f"{self.model} at {self._shown_base}"

    def __repr__(self) -> str:
        return f"<LlmClient {self.describe()}>"  # never the key

    # --- chatting ----------------------------------------------------------------------

    def chat(self, messages: list[dict[str, str]], *, max_tokens: int | None = None) -> ChatReply:
        """Send `messages`, retrying transient failures; raise `LlmError` when none succeeds."""
        payload = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens if max_tokens is None else max_tokens,
            "stream": False,
        }
        started = time.monotonic()
        retries: list[str] = []
        attempt = 0
        while True:
            attempt += 1
            try:
                document = self._attempt(payload)
                return self._reply(document, messages, started, attempt, retries)
            except _Failure as failure:
                if not failure.retryable or attempt > self.max_retries:
                    raise self._error(failure, attempt, tuple(retries)) from failure
                wait = self._backoff(attempt, failure.retry_after)
                retries.append(self._redact(f"{failure.summary}, waited {wait:.1f} s"))
                self._sleep(wait)

    def chat_stream(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int | None = None,
        on_text: Callable[[str], object],
    ) -> ChatReply:
        """Send `messages` asking for a streamed reply (`stream: true`, server-sent events)
        and call `on_text` with each piece of content as it arrives; the whole reply is
        returned at the end, as `chat` would. Transient failures are retried like `chat`'s
        only while nothing has arrived yet: a reply half-shown cannot be taken back."""
        payload = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens if max_tokens is None else max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        started = time.monotonic()
        retries: list[str] = []
        attempt = 0
        while True:
            attempt += 1
            received: list[str] = []
            try:
                document = self._stream_attempt(payload, received, on_text)
                return self._reply(document, messages, started, attempt, retries)
            except _Failure as failure:
                if received or not failure.retryable or attempt > self.max_retries:
                    raise self._error(failure, attempt, tuple(retries)) from failure
                wait = self._backoff(attempt, failure.retry_after)
                retries.append(self._redact(f"{failure.summary}, waited {wait:.1f} s"))
                self._sleep(wait)

    def _stream_attempt(
        self, payload: dict[str, Any], received: list[str], on_text: Callable[[str], object]
    ) -> dict[str, Any]:
        """One streamed POST: the pieces passed on as they come, then a chat.completion
        document assembled from them (content, usage when the server sent it)."""
        deadline = time.monotonic() + self.timeout
        stream = _StreamedCompletion()
        try:
            with self._client.stream("POST", self.endpoint, json=payload) as response:
                if response.status_code != 200:
                    raise self._status_failure(response, self._read_capped(response, deadline))
                if "text/event-stream" not in response.headers.get("content-type", ""):
                    # A server that ignores `stream` answers with the whole document.
                    document = _parse_completion(self._read_capped(response, deadline))
                    text = document["choices"][0]["message"].get("content") or ""
                    if text:
                        received.append(text)
                        on_text(text)
                    return document
                for line in response.iter_lines():
                    if time.monotonic() > deadline:
                        raise httpx.ReadTimeout("stream not complete within the timeout")
                    piece = stream.feed(line)
                    if piece:
                        received.append(piece)
                        on_text(piece)
        except httpx.TimeoutException as exc:
            raise _Failure(
                "timeout",
                f"timed out after {_seconds(self.timeout)} s",
                detail=type(exc).__name__,
                retryable=True,
            ) from exc
        except httpx.TransportError as exc:
            raise _Failure(
                "connection",
                f"connection failed ({type(exc).__name__})",
                detail=str(exc) or type(exc).__name__,
                retryable=True,
            ) from exc
        return stream.document()

    def _attempt(self, payload: dict[str, Any]) -> dict[str, Any]:
        """One POST; the decoded chat.completion document, or a `_Failure`."""
        deadline = time.monotonic() + self.timeout
        try:
            with self._client.stream("POST", self.endpoint, json=payload) as response:
                body = self._read_capped(response, deadline)
        except httpx.TimeoutException as exc:
            raise _Failure(
                "timeout",
                f"timed out after {_seconds(self.timeout)} s",
                detail=type(exc).__name__,
                retryable=True,
            ) from exc
        except httpx.DecodingError as exc:  # a broken gzip/deflate body
            raise _Failure(
                "malformed",
                "malformed response (undecodable body)",
                detail=str(exc),
                retryable=True,
            ) from exc
        except httpx.TransportError as exc:
            reason = str(exc) or type(exc).__name__
            raise _Failure(
                "connection",
                f"connection failed ({type(exc).__name__})",
                detail=reason,
                retryable=True,
            ) from exc
        status = response.status_code
        if status != 200:
            raise self._status_failure(response, body)
        return _parse_completion(body)

    def _read_capped(self, response: httpx.Response, deadline: float) -> bytes:
        """The body, refusing more than MAX_RESPONSE_BYTES (counted after decompression)
        and servers that trickle bytes past the overall timeout."""
        announced = response.headers.get("content-length", "")
        if announced.isdigit() and int(announced) > MAX_RESPONSE_BYTES:
            raise _too_large()
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise _too_large()
            if time.monotonic() > deadline:
                # httpx's read timeout is per read; this bounds the whole body.
                raise httpx.ReadTimeout("body not complete within the timeout")
            chunks.append(chunk)
        return b"".join(chunks)

    def _status_failure(self, response: httpx.Response, body: bytes) -> _Failure:
        status = response.status_code
        summary = f"{status} {_phrase(status)}"
        detail = _server_message(body)
        if status in RETRYABLE_STATUSES:
            return _Failure(
                "status",
                summary,
                detail=detail,
                status=status,
                retryable=True,
                retry_after=parse_retry_after(response.headers.get("retry-after")),
            )
        if 300 <= status < 400:
            location = response.headers.get("location", "")
            detail = f"redirected to {location}" if location else detail
        return _Failure("status", summary, detail=detail, status=status, retryable=False)

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Retry-After when the server gave one, else full jitter: uniform(0, base·2ⁿ⁻¹),
        both capped at retry_max_delay (a server asking for an hour is not waited for)."""
        if retry_after is not None:
            return min(max(0.0, retry_after), self.retry_max_delay)
        ceiling = min(self.retry_max_delay, self.retry_base_delay * 2 ** (attempt - 1))
        return random.uniform(0, ceiling)  # noqa: S311 - jitter, not security

    def _reply(
        self,
        document: dict[str, Any],
        messages: list[dict[str, str]],
        started: float,
        attempts: int,
        retries: list[str],
    ) -> ChatReply:
        choice = document["choices"][0]
        content = choice["message"].get("content") or ""
        usage = _parse_usage(document.get("usage"))
        if usage is None:
            prompt = "\n".join(str(m.get("content") or "") for m in messages)
            usage = ChatUsage(estimate_tokens(prompt), estimate_tokens(content), estimated=True)
        model = document.get("model")
        finish_reason = choice.get("finish_reason")
        return ChatReply(
            content=content,
            usage=usage,
            model=model if isinstance(model, str) and model else self.model,
            finish_reason=finish_reason if isinstance(finish_reason, str) else "",
            duration_ms=round((time.monotonic() - started) * 1000),
            attempts=attempts,
            retries=tuple(retries),
        )

    def _error(self, failure: _Failure, attempts: int, retries: tuple[str, ...]) -> LlmError:
        """The final, user-facing error for the last failure."""
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        after = f" after {tries}" if attempts > 1 else ""
        detail = f": {failure.detail}" if failure.detail else ""
        status = failure.status
        where = f"LLM at {self._shown_base}"
        if failure.kind == "timeout":
            message = (
                f"LLM request timed out after {_seconds(self.timeout)} s ({tries}): "
                f"{self._shown_endpoint} did not answer in time; "
                "raise LLM_TIMEOUT or check the server"
            )
        elif failure.kind == "connection":
            message = (
                f"LLM request failed{after}: connection to {self._shown_endpoint} failed{detail}"
            )
        elif failure.kind == "malformed":
            message = (
                f"LLM request failed{after}: malformed response from {self._shown_endpoint}{detail}"
            )
        elif failure.kind == "too_large":
            message = f"LLM response too large from {self._shown_endpoint} ({failure.detail})"
        elif status in (401, 403):
            message = (
                f"{where} refused the API key ({status}){detail}"
                if self._api_key
                else f"{where} requires an API key ({status}); set LLM_API_KEY{detail}"
            )
        elif status == 404:
            message = (
                f"{where} answered 404 for model {self.model!r}{detail} (LLM_BASE_URL must be "
                "the full API base, e.g. ending in /v1, and LLM_MODEL a model it serves)"
            )
        elif status is not None and 300 <= status < 400:
            message = f"{where} answered {status}{detail}; set LLM_BASE_URL to the final address"
        elif failure.retryable:
            message = f"LLM request failed{after}: {status} from {self._shown_endpoint}{detail}"
        else:
            message = f"{where} rejected the request ({status}){detail}"
        return LlmError(
            self._redact(message),
            status=status,
            retryable=failure.retryable,
            attempts=attempts,
            retries=retries,
        )

    def _redact(self, text: str) -> str:
        # Servers do echo keys back ("Incorrect API key provided: sk-..."); never pass one on.
        return text.replace(self._api_key, "***") if self._api_key else text


def _parse_completion(body: bytes) -> dict[str, Any]:
    """The chat.completion document, checked down to choices[0].message.content."""
    try:
        document = json.loads(body)
    except ValueError:
        raise _Failure(
            "malformed", "malformed response (not JSON)", detail=_excerpt(body), retryable=True
        ) from None
    if not isinstance(document, dict):
        raise _Failure(
            "malformed",
            "malformed response (not a JSON object)",
            detail=_excerpt(body),
            retryable=True,
        )
    choices = document.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict) or "content" not in message:
        # Some gateways answer 200 with an error document; its message is the useful part.
        detail = _server_message(body) if "error" in document else _excerpt(body)
        raise _Failure(
            "malformed",
            "malformed response (no choices[0].message.content)",
            detail=f"no choices[0].message.content in {detail}",
            retryable=True,
        )
    if not isinstance(message["content"], str | None):
        raise _Failure(
            "malformed",
            "malformed response (content is not text)",
            detail=_excerpt(body),
            retryable=True,
        )
    return document


class _StreamedCompletion:
    """The `data:` lines of a streamed chat completion, folded into one document."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.usage: object = None
        self.model: object = None
        self.finish_reason: object = None

    def feed(self, line: str) -> str:
        """The content piece one line carries ("" for none)."""
        if not line.startswith("data:"):
            return ""
        data = line[5:].strip()
        if not data or data == "[DONE]":
            return ""
        try:
            chunk = json.loads(data)
        except ValueError:
            raise _Failure(
                "malformed", "malformed stream (not JSON)", detail=_cut(data), retryable=True
            ) from None
        if not isinstance(chunk, dict):
            return ""
        self.usage = chunk.get("usage") or self.usage
        self.model = chunk.get("model") or self.model
        choices = chunk.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        if not isinstance(choice, dict):
            return ""
        self.finish_reason = choice.get("finish_reason") or self.finish_reason
        delta = choice.get("delta")
        piece = delta.get("content") if isinstance(delta, dict) else None
        if not isinstance(piece, str) or not piece:
            return ""
        self.size += len(piece)
        if self.size > MAX_RESPONSE_BYTES:
            raise _too_large()
        self.parts.append(piece)
        return piece

    def document(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "choices": [
                {
                    "message": {"content": "".join(self.parts)},
                    "finish_reason": self.finish_reason,
                }
            ],
            "usage": self.usage,
        }


def _parse_usage(usage: object) -> ChatUsage | None:
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if _is_count(prompt) and _is_count(completion):
        return ChatUsage(prompt, completion)
    return None


def _is_count(value: object) -> TypeGuard[int]:
    # bool is an int subclass, and `true` is not a token count.
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After as seconds from now: delta-seconds or an HTTP date; None if unusable."""
    if not value:
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
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT by definition
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _server_message(body: bytes) -> str:
    """The server's own explanation: OpenAI's error.message when present, else the text."""
    try:
        document = json.loads(body)
    except ValueError:
        return _excerpt(body)
    if isinstance(document, dict):
        error = document.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return _cut(error["message"])
        if isinstance(error, str):
            return _cut(error)
        for key in ("message", "detail"):
            if isinstance(document.get(key), str):
                return _cut(document[key])
    return _excerpt(body)


def _excerpt(body: bytes) -> str:
    if not body:
        return "empty body"
    return repr(_cut(body.decode("utf-8", errors="replace")))


def _cut(text: str) -> str:
    text = " ".join(text.split())  # one line, whatever the server sent
    return text if len(text) <= _ERROR_DETAIL_CHARS else text[: _ERROR_DETAIL_CHARS - 1] + "…"


def _too_large() -> _Failure:
    # Not retryable: a body this size is how the server answers, not a passing accident.
    return _Failure(
        "too_large",
        "response too large",
        detail=f"over {MAX_RESPONSE_BYTES // (1024 * 1024)} MB",
        retryable=False,
    )


def _without_userinfo(url: str) -> str:
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return url
    return str(parsed.copy_with(userinfo=b"")) if parsed.userinfo else url


def _phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Overloaded" if status == 529 else "Error"


def _seconds(value: float) -> str:
    return f"{value:g}"
