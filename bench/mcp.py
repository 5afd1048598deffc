"""MCP protocol overhead benchmark (issue 17).

    .venv/bin/python bench/mcp.py [--chunks 5000] [--entities 2000] [--queries 200]
                                  [--limit 10] [--keep] [--reuse]

The generated retrieval workspace (bench.retrieval_run.bench_workspace) is loaded, a
production server is started (`gunicorn config.wsgi`, config.settings.production, one
gthread worker), and the same queries run, interleaved, through `POST
/api/v1/workspaces/{slug}/search` (httpx, one keep-alive connection, a bearer token) and
through the MCP `search` tool (the official client over streamable HTTP at /mcp/, one
session, the same token). Both answer from `hybrid_search`; the difference is the protocol:
the JSON-RPC envelope, the SDK's stateless transport run per request, the rate-limit count,
the call log row, and the larger answer (the context block once more as the text block).
Printed as JSON: p50 / p95 of each and the overhead at p50 (goal <= 10 ms). Uses its own
database (`graphloom_bench`).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    # The project root replaces this script's folder on the path: from bench/, `import mcp`
    # would find this file instead of the SDK.
    sys.path[0] = str(Path(__file__).resolve().parent.parent)
    from bench.bootstrap import run

    run("bench.mcp_run")
