"""The other ways in: a handshake-era client (initialize, then requests) over HTTP, and
stdio through `manage.py mcp` started as a subprocess by the official client."""

from __future__ import annotations

import subprocess
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters

from agents.models import AgentCall
from tests.support import MANAGE_PY, subprocess_env

pytestmark = pytest.mark.slow


def test_a_handshake_era_client_is_served_statelessly(alice, corpus, session):
    async def fn(client):
        tools = (await client.list_tools()).tools
        found = await client.call_tool("search", {"query": "Who repaired crane 7?"})
        return client.protocol_version, tools, found

    version, tools, found = session(alice, fn, mode="legacy")
    assert version == "2025-11-25"
    assert "search" in {tool.name for tool in tools}
    assert "Mirela Ostrova" in found.structured_content["chunks"][0]["text"]


def _stdio(member, workspace: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[MANAGE_PY, "mcp", "--workspace", workspace, "--token-env", "GRAPHLOOM_TOKEN"],
        env=subprocess_env(GRAPHLOOM_TOKEN=member.plaintext),
    )


@pytest.mark.slow(reason="the MCP stdio server as a subprocess")
def test_stdio_serves_the_tools_through_the_management_command(alice, corpus, transactional_db):
    async def main():
        async with Client(_stdio(alice, "acme"), cache=None) as client:
            tools = (await client.list_tools()).tools
            found = await client.call_tool("search", {"query": "Who repaired crane 7?"})
            refused = await client.call_tool("get_entity", {"entity_id": 10**12})
            return tools, found, refused

    tools, found, refused = anyio.run(main)
    assert {"search", "add_text", "merge_entities"} <= {tool.name for tool in tools}
    assert "Mirela Ostrova" in found.structured_content["chunks"][0]["text"]
    assert refused.is_error and "not found" in refused.content[0].text
    logged = AgentCall.objects.filter(token=alice.token, transport="stdio")
    assert sorted(logged.values_list("tool", "ok")) == [("get_entity", False), ("search", True)]


def test_stdio_refuses_a_token_of_another_workspace(alice, bob, transactional_db):
    done = subprocess.run(
        [sys.executable, MANAGE_PY, "mcp", "--workspace", "acme", "--token-env", "GRAPHLOOM_TOKEN"],
        env=subprocess_env(GRAPHLOOM_TOKEN=bob.plaintext),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == ""  # stdout is the protocol's: nothing else ever goes there
    assert "does not belong to workspace 'acme'" in done.stderr
