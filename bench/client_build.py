"""What building an outgoing HTTP client costs: the LLM client (built for every answer,
review and community summary, and for each extraction configuration) and the crawler's
fetcher (one per crawl run).

    .venv/bin/python bench/client_build.py [--clients 50] [--runs 5]

Prints, for each, the median over runs of the CPU milliseconds per client built (process
time, so what else the machine runs does not count). Before system/tls.py each client built
its own TLS context, loading the whole CA bundle; now the process builds one. No database,
no network: clients are built and closed, nothing is sent.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ingest.crawler.fetch import Fetcher
from system.llm.client import LlmClient


def llm_client() -> Any:
    return LlmClient(base_url="https://llm.example.org/v1", model="m", api_key="sk-x")


def fetcher() -> Any:
    return Fetcher(user_agent="bench", timeout=5, max_bytes=1_000_000, max_redirects=3)


def cpu_ms_per_client(build: Callable[[], Any], clients: int) -> float:
    start = time.process_time()
    for _ in range(clients):
        build().close()
    return (time.process_time() - start) * 1000 / clients


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for name, build in (("llm_client", llm_client), ("fetcher", fetcher)):
        build().close()  # the first one also pays for what a process builds once
        runs = [cpu_ms_per_client(build, args.clients) for _ in range(args.runs)]
        print(
            f"{name}: {statistics.median(runs):.2f} CPU-ms per client "
            f"(median of {args.runs} runs of {args.clients}; "
            f"min {min(runs):.2f}, max {max(runs):.2f})"
        )


if __name__ == "__main__":
    main()
