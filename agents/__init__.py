"""Agents: the MCP server (Model Context Protocol) over the same actions and selectors as
the JSON API, so an agent host (desktop assistant, IDE, agent framework) can search,
inspect and feed a workspace's knowledge graph. docs/agents.md is the user's guide; this
is the table of contents.

Callers (parse, authenticate, serve):
    views.py      /mcp/: streamable HTTP, stateless, JSON responses, bearer token
    management/   `manage.py mcp --workspace SLUG --token-env NAME`: stdio
    admin.py      the call log, read-only
    hooks.py      the upkeep job (UPKEEP_JOBS): the call log pruned

The server: server.py (the SDK's low-level Server bound to one agent's access: tool
calls and resource reads go through the rate limit, the role, the argument model, one
action or selector, the size bound and the call log).

Tools and resources: tools/ (one module per subject: search, entities, graph, sources,
curation; base.py says what a tool is), resources.py (entities and document spans by URI).

Shared pieces: access.py (token -> workspace, role), limits.py (per-token rate limit),
results.py (the size bound and its marker), actions.py (the call log's write).

Models: models.py (`AgentCall`: one row per call, which the rate limit counts).
"""
