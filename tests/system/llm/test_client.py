"""The OpenAI-compatible chat client against a real local server (tests/llm_server.py).

Every test talks HTTP to a `ScriptedLLM` on 127.0.0.1: what the client sent is read back
from the server's record, and failures are real status codes, real timeouts, real dropped
connections and real malformed bodies. Only the backoff sleep is replaced, by a recorder,
so retry tests are fast and can assert on how long the client would have waited.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from system.llm.client import (
    MAX_RESPONSE_BYTES,
    ChatReply,
    LlmClient,
    LlmError,
    LlmNotConfigured,
    estimate_tokens,
    parse_retry_after,
)
from tests.llm_server import DONE, RecordedRequest, Reply, ScriptedLLM

KEY = "sk-test-9f8e7d6c5b4a39281706"
MESSAGES = [
    {"role": "system", "content": "You extract entities."},
    {"role": "user", "content": "Ines Keeper is the harbour master of Harbour Town."},
]


class Sleeps:
    """Stands in for time.sleep: records the durations instead of waiting them."""

    def __init__(self) -> None:
        self.durations: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.durations.append(seconds)


@pytest.fixture
def llm():
    with ScriptedLLM() as server:
        yield server


def make_client(llm: ScriptedLLM, sleeps: Sleeps | None = None, **options) -> LlmClient:
    options.setdefault("model", "test-model")
    options.setdefault("timeout", 5.0)
    return LlmClient(base_url=llm.base_url, sleep=sleeps or Sleeps(), **options)


def completion_body(**fields) -> bytes:
    """A chat.completion document; `fields` replace or (with None) remove top-level keys."""
    document = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "hello"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    for name, value in fields.items():
        if value is None:
            document.pop(name, None)
        else:
            document[name] = value
    return json.dumps(document).encode()


# --- success ---------------------------------------------------------------------------


def test_chat_sends_the_request_and_parses_the_reply(llm):
    llm.script(Reply("Ines Keeper<|>person", usage=(42, 7), finish_reason="length"))
    with make_client(llm, api_key=KEY, temperature=0.2, max_tokens=321) as client:
        reply = client.chat(MESSAGES)

    assert isinstance(reply, ChatReply)
    assert reply.content == "Ines Keeper<|>person"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (42, 7)
    assert not reply.usage.estimated
    assert reply.model == "test-model"
    assert reply.finish_reason == "length"
    assert reply.attempts == 1
    assert reply.retries == ()
    assert reply.duration_ms >= 0

    [sent] = llm.chat_requests
    assert sent.path == "/v1/chat/completions"
    assert sent.method == "POST"
    assert sent.body == {
        "model": "test-model",
        "messages": MESSAGES,
        "temperature": 0.2,
        "max_tokens": 321,
        "stream": False,
    }
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["user-agent"].startswith("Graphloom/")
    assert sent.headers["content-type"] == "application/json"


def test_no_authorization_header_without_a_key(llm):
    with make_client(llm) as client:
        client.chat(MESSAGES)
    [sent] = llm.chat_requests
    assert "authorization" not in sent.headers


def test_max_tokens_per_call_and_trailing_slash(llm):
    client = LlmClient(base_url=llm.base_url + "/", model="m", max_tokens=2000)
    try:
        client.chat(MESSAGES, max_tokens=50)
    finally:
        client.close()
    [sent] = llm.chat_requests
    assert sent.path == "/v1/chat/completions"
    assert sent.body["max_tokens"] == 50
    assert client.describe() == f"m at {llm.base_url}"


def test_usage_missing_is_estimated(llm):
    llm.script(Reply(body=completion_body(usage=None)))
    with make_client(llm) as client:
        reply = client.chat(MESSAGES)
    prompt = "\n".join(m["content"] for m in MESSAGES)
    assert reply.usage.estimated
    assert reply.usage.prompt_tokens == estimate_tokens(prompt)
    assert reply.usage.completion_tokens == estimate_tokens("hello") == 2


def test_null_content_is_empty_text(llm):
    choice = {"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": None}
    llm.script(Reply(body=completion_body(choices=[choice])))
    with make_client(llm) as client:
        reply = client.chat(MESSAGES)
    assert reply.content == ""
    assert reply.finish_reason == ""


def test_estimate_tokens():
    assert estimate_tokens("") == 1
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("x" * 400) == 100


# --- retries ---------------------------------------------------------------------------


def test_429_with_retry_after_is_waited_for_and_retried(llm):
    llm.script(Reply(status=429, headers={"Retry-After": "1"}), Reply("after the wait"))
    sleeps = Sleeps()
    with make_client(llm, sleeps, retry_base_delay=0.01) as client:
        reply = client.chat(MESSAGES)
    assert reply.content == "after the wait"
    assert reply.attempts == 2
    assert len(llm.chat_requests) == 2
    assert sleeps.durations == [1.0]
    assert reply.retries == ("429 Too Many Requests, waited 1.0 s",)


def test_retry_after_as_http_date_is_capped(llm):
    in_an_hour = format_datetime(datetime.now(UTC) + timedelta(hours=1), usegmt=True)
    llm.script(Reply(status=503, headers={"Retry-After": in_an_hour}), Reply("ok"))
    sleeps = Sleeps()
    with make_client(llm, sleeps, retry_max_delay=7.0) as client:
        assert client.chat(MESSAGES).content == "ok"
    assert sleeps.durations == [7.0]


def test_503_twice_then_success_backs_off_with_jitter(llm):
    llm.script(Reply(status=503), Reply(status=503), Reply("third time"))
    sleeps = Sleeps()
    with make_client(llm, sleeps, retry_base_delay=1.0, retry_max_delay=30.0) as client:
        reply = client.chat(MESSAGES)
    assert reply.content == "third time"
    assert reply.attempts == 3
    assert len(reply.retries) == 2
    assert all(line.startswith("503 Service Unavailable, waited") for line in reply.retries)
    # Full jitter: uniform(0, base · 2^(n-1)) for the n-th retry.
    first, second = sleeps.durations
    assert 0 <= first <= 1.0
    assert 0 <= second <= 2.0


def test_backoff_is_capped_at_retry_max_delay(llm):
    llm.script(*[Reply(status=500)] * 4, Reply("ok"))
    sleeps = Sleeps()
    with make_client(llm, sleeps, retry_base_delay=10.0, retry_max_delay=3.0) as client:
        client.chat(MESSAGES)
    assert len(sleeps.durations) == 4
    assert all(0 <= s <= 3.0 for s in sleeps.durations)


def test_retryable_statuses_exhausted(llm):
    llm.script(*[Reply("The engine is warming up.", status=503)] * 3)
    with make_client(llm, max_retries=2) as client, pytest.raises(LlmError) as caught:
        client.chat(MESSAGES)
    error = caught.value
    assert error.status == 503
    assert error.retryable
    assert error.attempts == 3
    assert len(error.retries) == 2
    assert len(llm.chat_requests) == 3
    assert str(error) == (
        f"LLM request failed after 3 attempts: 503 from {llm.base_url}/chat/completions: "
        "The engine is warming up."
    )


def test_529_overloaded_is_retried(llm):
    llm.script(Reply(status=529), Reply("ok"))
    with make_client(llm) as client:
        reply = client.chat(MESSAGES)
    assert reply.attempts == 2
    assert reply.retries[0].startswith("529 Overloaded")


def test_hanging_server_times_out_and_is_retried(llm):
    llm.script(Reply(hang=True), Reply(hang=True))
    with make_client(llm, timeout=0.5, max_retries=1) as client, pytest.raises(LlmError) as caught:
        client.chat(MESSAGES)
    error = caught.value
    assert "timed out after 0.5 s" in str(error)
    assert error.attempts == 2
    assert error.retryable
    assert error.status is None
    assert len(llm.chat_requests) == 2


def test_dropped_connection_is_retried(llm):
    llm.script(Reply(disconnect=True), Reply("ok"))
    with make_client(llm) as client:
        reply = client.chat(MESSAGES)
    assert reply.content == "ok"
    assert reply.attempts == 2
    assert reply.retries[0].startswith("connection failed")


def test_unreachable_server_fails_clearly():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = LlmClient(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=1, sleep=Sleeps()
    )
    with client, pytest.raises(LlmError) as caught:
        client.chat(MESSAGES)
    assert caught.value.attempts == 2
    assert caught.value.retryable
    assert str(caught.value).startswith(
        f"LLM request failed after 2 attempts: connection to http://127.0.0.1:{port}/v1/"
    )


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"),
        (b'{"id": "chatcmpl-1", "choices": [{"index": 0, "mess', "application/json"),
        (completion_body(choices=None), "application/json"),
        (completion_body(choices=[]), "application/json"),
        (
            completion_body(choices=[{"index": 0, "message": {"role": "assistant"}}]),
            "application/json",
        ),
        (b"", "application/json"),
    ],
    ids=["html", "truncated-json", "no-choices", "empty-choices", "no-content", "empty"],
)
def test_malformed_200_is_retried_then_fails_clearly(llm, body, content_type):
    llm.script(*[Reply(body=body, headers={"Content-Type": content_type})] * 3)
    with make_client(llm, max_retries=2) as client, pytest.raises(LlmError) as caught:
        client.chat(MESSAGES)
    error = caught.value
    assert error.retryable
    assert error.attempts == 3
    assert len(llm.chat_requests) == 3
    assert str(error).startswith(
        f"LLM request failed after 3 attempts: malformed response from {llm.base_url}"
    )
    assert "\n" not in str(error)
    assert all(line.startswith("malformed response") for line in error.retries)


def test_error_document_in_a_200_is_reported(llm):
    body = json.dumps({"error": {"message": "upstream provider unavailable"}}).encode()
    llm.script(Reply(body=body))
    with make_client(llm, max_retries=0) as client, pytest.raises(LlmError) as caught:
        client.chat(MESSAGES)
    assert "upstream provider unavailable" in str(caught.value)


def test_malformed_then_good_reply_recovers(llm):
    llm.script(Reply(body=b"<html>maintenance</html>"), Reply("ok"))
    with make_client(llm) as client:
        reply = client.chat(MESSAGES)
    assert reply.content == "ok"
    assert reply.retries[0].startswith("malformed response (not JSON), waited")


def test_response_over_the_cap_is_refused(llm):
    llm.script(Reply(body=b"x" * (MAX_RESPONSE_BYTES + 1)))
    with make_client(llm) as client, pytest.raises(LlmError) as caught:
        client.chat(MESSAGES)
    assert "too large" in str(caught.value)
    assert not caught.value.retryable
    assert len(llm.chat_requests) == 1


# --- errors that are not retried -------------------------------------------------------


def test_401_is_not_retried_and_does_not_leak_the_key(llm):
    # Real providers echo (part of) the key back; the client must not pass it on.
    llm.script(Reply(f"Incorrect API key provided: {KEY}.", status=401))
    with make_client(llm, api_key=KEY) as client, pytest.raises(LlmError) as caught:
        client.chat(MESSAGES)
    error = caught.value
    assert len(llm.chat_requests) == 1
    assert error.status == 401
    assert not error.retryable
    assert error.attempts == 1
    assert "401" in str(error)
    assert f"LLM at {llm.base_url} refused the API key (401)" in str(error)
    assert KEY not in str(error)
    assert "Incorrect API key provided" in str(error)


def test_401_without_a_key_says_to_set_one(llm):
    llm.script(Reply("You must provide an API key.", status=401))
    with make_client(llm) as client, pytest.raises(LlmError) as caught:
        client.chat(MESSAGES)
    assert "LLM_API_KEY" in str(caught.value)


def test_other_4xx_fail_at_once_with_the_servers_message(llm):
    llm.script(Reply("max_tokens is too large: 99999.", status=400))
    with make_client(llm) as client, pytest.raises(LlmError) as caught:
        client.chat(MESSAGES)
    assert len(llm.chat_requests) == 1
    assert caught.value.status == 400
    assert str(caught.value) == (
        f"LLM at {llm.base_url} rejected the request (400): max_tokens is too large: 99999."
    )


def test_404_hints_at_base_url_and_model(llm):
    llm.script(Reply("The model `nope` does not exist.", status=404))
    with make_client(llm, model="nope") as client, pytest.raises(LlmError) as caught:
        client.chat(MESSAGES)
    message = str(caught.value)
    assert "404" in message
    assert "does not exist" in message
    assert "/v1" in message


def test_long_server_messages_are_cut(llm):
    llm.script(Reply("word " * 500, status=400))
    with make_client(llm) as client, pytest.raises(LlmError) as caught:
        client.chat(MESSAGES)
    assert len(str(caught.value)) < 300 + 100
    assert str(caught.value).endswith("…")


def test_the_key_never_appears_in_any_error(llm):
    scenarios = [
        [Reply(f"bad key {KEY}", status=401)],
        [Reply(f"forbidden for {KEY}", status=403)],
        [Reply(f"no such model for {KEY}", status=404)],
        [Reply(f"rejected {KEY}", status=400)],
        [Reply(f"slow down {KEY}", status=429)] * 2,
        [Reply(f"down {KEY}", status=503)] * 2,
        [Reply(body=f"<html>{KEY}</html>".encode())] * 2,
        [Reply(body=json.dumps({"error": f"key {KEY} revoked"}).encode())] * 2,
        [Reply(hang=True)] * 2,
    ]
    errors: list[LlmError] = []
    with make_client(llm, api_key=KEY, timeout=0.3, max_retries=1) as client:
        for replies in scenarios:
            llm.script(*replies)
            with pytest.raises(LlmError) as caught:
                client.chat(MESSAGES)
            errors.append(caught.value)
    assert len(errors) == len(scenarios)
    for error in errors:
        assert KEY not in str(error)
        assert KEY not in error.message
        assert all(KEY not in line for line in error.retries)
    assert KEY not in repr(client)


# --- configuration ---------------------------------------------------------------------


def test_from_settings_requires_base_url_and_model(settings):
    settings.LLM_BASE_URL = ""
    settings.LLM_MODEL = ""
    with pytest.raises(LlmNotConfigured) as caught:
        LlmClient.from_settings()
    assert "LLM_BASE_URL and LLM_MODEL" in str(caught.value)
    assert isinstance(caught.value, LlmError)

    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"
    with pytest.raises(LlmNotConfigured, match="LLM_MODEL"):
        LlmClient.from_settings()


def test_from_settings_reads_every_setting(settings, llm):
    settings.LLM_BASE_URL = llm.base_url
    settings.LLM_MODEL = "configured-model"
    settings.LLM_API_KEY = KEY
    settings.LLM_TIMEOUT = 12
    settings.LLM_TEMPERATURE = 0.5
    settings.LLM_MAX_TOKENS = 77
    settings.LLM_MAX_RETRIES = 2
    settings.LLM_RETRY_BASE_DELAY = 0.5
    settings.LLM_RETRY_MAX_DELAY = 4
    with LlmClient.from_settings(sleep=Sleeps()) as client:
        assert (client.timeout, client.max_retries) == (12.0, 2)
        assert (client.retry_base_delay, client.retry_max_delay) == (0.5, 4.0)
        client.chat(MESSAGES)
    [sent] = llm.chat_requests
    assert sent.body["model"] == "configured-model"
    assert sent.body["temperature"] == 0.5
    assert sent.body["max_tokens"] == 77
    assert sent.headers["authorization"] == f"Bearer {KEY}"


def test_a_base_url_that_is_not_http_is_refused():
    with pytest.raises(LlmNotConfigured, match="http"):
        LlmClient(base_url="api.openai.com/v1", model="m")


def test_parse_retry_after():
    assert parse_retry_after(None) is None
    assert parse_retry_after("") is None
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("1.5") == 1.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after("soon") is None
    past = format_datetime(datetime.now(UTC) - timedelta(minutes=5), usegmt=True)
    assert parse_retry_after(past) == 0.0
    future = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    assert 100 < (parse_retry_after(future) or 0) <= 120


# --- concurrency -----------------------------------------------------------------------


def test_concurrent_calls_overlap(llm):
    llm.default_delay = 0.3
    with make_client(llm) as client, ThreadPoolExecutor(max_workers=8) as pool:
        replies = list(pool.map(lambda _: client.chat(MESSAGES), range(8)))
    assert [r.content for r in replies] == [DONE] * 8
    assert all(r.attempts == 1 for r in replies)
    arrivals = sorted(r.received_at for r in llm.chat_requests)
    assert len(arrivals) == 8
    # Had the client serialised its calls, only one request would have arrived before the
    # first answer (0.3 s after it) could have been sent.
    overlapping = [t for t in arrivals if t < arrivals[0] + 0.3]
    assert len(overlapping) >= 6


# --- the scripted server itself --------------------------------------------------------


def test_scripted_llm_answers_in_order_then_falls_back(llm):
    llm.script("first", Reply("second"))
    assert llm.pending == 2
    with make_client(llm) as client:
        contents = [client.chat(MESSAGES).content for _ in range(3)]
    assert contents == ["first", "second", DONE]
    assert llm.pending == 0

    seen: list[str] = []

    def echo(body: dict) -> Reply:
        seen.append(body["messages"][-1]["content"])
        return Reply("echo: " + body["messages"][-1]["content"])

    llm.responder = echo
    with make_client(llm) as client:
        assert client.chat([{"role": "user", "content": "ping"}]).content == "echo: ping"
    assert seen == ["ping"]


def test_scripted_llm_records_requests_and_serves_models(llm):
    with httpx.Client() as http:
        models = http.get(llm.base_url + "/models").json()
        answer = http.post(
            llm.base_url + "/chat/completions",
            json={"model": "asked-for", "messages": [{"role": "user", "content": "x" * 40}]},
            headers={"X-Trace": "abc"},
        ).json()
        bad = http.post(llm.base_url + "/chat/completions", content=b"not json")
        error = http.post(llm.base_url + "/chat/completions", json={"messages": []})

    assert models["data"][0]["id"] == llm.model
    assert answer["object"] == "chat.completion"
    assert answer["model"] == "asked-for"
    assert answer["choices"][0]["message"] == {"role": "assistant", "content": DONE}
    assert answer["usage"] == {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    assert bad.status_code == 400
    assert bad.json()["error"]["type"] == "invalid_request_error"
    assert error.status_code == 200  # a JSON object, so the responder answers

    recorded = llm.requests
    assert [r.path for r in recorded] == [
        "/v1/models",
        "/v1/chat/completions",
        "/v1/chat/completions",
        "/v1/chat/completions",
    ]
    assert [r.method for r in recorded] == ["GET", "POST", "POST", "POST"]
    assert len(llm.chat_requests) == 3
    second = recorded[1]
    assert isinstance(second, RecordedRequest)
    assert second.headers["x-trace"] == "abc"
    assert second.messages == [{"role": "user", "content": "x" * 40}]
    assert json.loads(second.raw) == second.body
    assert recorded[2].body is None and recorded[2].raw == b"not json"
    assert recorded[0].received_at <= recorded[1].received_at


def test_scripted_llm_error_shape_and_headers(llm):
    llm.script(Reply("Rate limit reached.", status=429, headers={"Retry-After": "3"}))
    with httpx.Client() as http:
        response = http.post(llm.base_url + "/chat/completions", json={"messages": []})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "3"
    assert response.json() == {
        "error": {
            "message": "Rate limit reached.",
            "type": "rate_limit_error",
            "code": "rate_limit_exceeded",
        }
    }


def test_scripted_llm_stops_promptly_with_a_hanging_request():
    llm = ScriptedLLM().start()
    llm.script(Reply(hang=True))
    client = LlmClient(base_url=llm.base_url, model="m", timeout=30, max_retries=0)
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            client.chat(MESSAGES)
        except LlmError as exc:
            outcome.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    deadline = time.monotonic() + 5
    while not llm.chat_requests and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    llm.stop()
    assert time.monotonic() - started < 2
    caller.join(timeout=5)
    client.close()
    assert not caller.is_alive()
    # The hanging handler dropped the connection when the server stopped.
    assert outcome and "Server disconnected" in str(outcome[0])


def test_credentials_in_the_base_url_are_not_shown():
    with LlmClient(base_url="https://user:hunter22@llm.example/v1", model="m") as client:
        assert client.describe() == "m at https://llm.example/v1"
        assert "hunter22" not in repr(client)
