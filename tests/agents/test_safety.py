"""Limits and safety of the MCP server, through the official client against the live
server: roles, tenancy, size bounds, the SSRF guard, malformed input, the rate limit and
the call log."""

from __future__ import annotations

import json
import re

import httpx
import pytest
from mcp import MCPError

from agents.models import AgentCall
from agents.results import bound_data, dumps
from ingest.actions.crawl import do_run_crawl
from ingest.models import Source
from knowledge.actions.curation.merge import do_merge_entities
from knowledge.actions.curation.relations import do_edit_relation
from knowledge.models import Relation
from tests.agents.conftest import call
from tests.ingest.crawl_site import CrawlSite
from workspaces.models import Role

MISSING = 10**12
TRUNCATED = re.compile(r"\[truncated: \d+ more characters; narrow the query or use limit/offset\]")


def test_a_viewer_is_refused_every_write_tool_naming_the_role(make_member, corpus, session):
    viewer = make_member("vera", workspace="acme", role=Role.VIEWER)
    crane, authority = corpus.entities["Crane 7"], corpus.entities["Harbour Authority"]
    writes = {
        "add_text": {"text": "A note."},
        "add_url": {"url": "https://example.org/"},
        "crawl": {"url": "https://example.org/", "max_pages": 5},
        "merge_entities": {"entity_ids": [crane, authority]},
        "unmerge": {"entity_id": crane},
        "add_relation": {"source_id": authority, "target_id": crane, "type": "related_to"},
        "update_relation": {"relation_id": 1, "description": "x"},
        "delete_relation": {"relation_id": 1},
        "reverse_relation": {"relation_id": 1},
        "undo_relation_change": {"event_id": 1},
    }
    sources = Source.objects.count()

    async def fn(client):
        return {name: await client.call_tool(name, args) for name, args in writes.items()}

    for name, result in session(viewer, fn).items():
        assert result.is_error, name
        message = result.content[0].text
        assert message.startswith(f"{name}: This needs the editor role in workspace 'acme'")
        assert "you are viewer" in message
        assert result.structured_content["error"]["code"] == "forbidden"
    assert Source.objects.count() == sources
    # Reads stay open to viewers.
    assert not call(session, viewer, "graph_stats", {}).is_error


def _digits(text: str) -> str:
    return re.sub(r"\d+", "N", text)


def test_another_workspaces_token_sees_nothing_of_this_one(alice, bob, corpus, session):
    crane, mirela = corpus.entities["Crane 7"], corpus.entities["Mirela Ostrova"]
    relation = Relation.objects.get(
        workspace=alice.workspace, source_id=mirela, target_id=crane, state="active"
    ).pk
    relation_event = do_edit_relation(
        workspace=alice.workspace, relation_id=relation, description="Repaired it."
    )
    event = do_merge_entities(
        workspace=alice.workspace, merged_ids=[corpus.entities["Harbour Authority"], crane]
    )
    by_id = {
        "get_entity": ({"entity_id": crane}, {"entity_id": MISSING}),
        "neighborhood": ({"entity_id": mirela}, {"entity_id": MISSING}),
        "find_path": ({"from_id": mirela, "to_id": crane}, {"from_id": MISSING, "to_id": crane}),
        "source_status": ({"source_id": corpus.crane.pk}, {"source_id": MISSING}),
        "merge_entities": ({"entity_ids": [mirela, crane]}, {"entity_ids": [MISSING, crane]}),
        "unmerge": ({"event_id": event.pk}, {"event_id": MISSING}),
        "add_relation": (
            {"source_id": mirela, "target_id": crane, "type": "works_for"},
            {"source_id": MISSING, "target_id": crane, "type": "works_for"},
        ),
        "update_relation": ({"relation_id": relation, "description": "x"},
                            {"relation_id": MISSING, "description": "x"}),
        "delete_relation": ({"relation_id": relation}, {"relation_id": MISSING}),
        "reverse_relation": ({"relation_id": relation}, {"relation_id": MISSING}),
        "undo_relation_change": ({"event_id": relation_event.pk}, {"event_id": MISSING}),
    }  # fmt: skip
    document = corpus.crane.documents.get()
    uris = [
        f"graphloom://entities/{mirela}",
        f"graphloom://documents/{document.pk}/span/0-20",
    ]

    async def fn(client):
        answers = {
            name: [await client.call_tool(name, args) for args in pair]
            for name, pair in by_id.items()
        }
        listings = {
            name: (await client.call_tool(name, args)).structured_content
            for name, args in [
                ("search", {"query": "Who repaired crane 7? Mirela Ostrova"}),
                ("ask", {"question": "Who repaired crane 7?"}),
                ("list_entities", {"q": "Mirela"}),
                ("list_sources", {}),
                ("graph_stats", {}),
            ]
        }
        refused = []
        for uri in uris:
            with pytest.raises(MCPError) as raised:
                await client.read_resource(uri)
            refused.append(raised.value.message)
        resources = (await client.list_resources()).resources
        written = await client.call_tool("add_text", {"text": "Crane 7 is ours now."})
        return answers, listings, refused, resources, written

    alices_sources = set(Source.objects.filter(workspace=alice.workspace))
    answers, listings, refused, resources, written = session(bob, fn)
    for name, (theirs, missing) in answers.items():
        assert theirs.is_error and missing.is_error, name
        assert theirs.structured_content["error"]["code"] == "not_found", name
        assert _digits(theirs.content[0].text) == _digits(missing.content[0].text), name
    assert listings["search"]["chunks"] == listings["search"]["entities"] == []
    assert listings["ask"]["passages"] == listings["ask"]["citations"] == []
    assert listings["list_entities"]["count"] == listings["list_sources"]["count"] == 0
    assert listings["graph_stats"]["entities"] == listings["graph_stats"]["counts"]["sources"] == 0
    assert all("not found" in message for message in refused)
    assert resources == []
    # A write lands in the token's own workspace, whatever it names.
    assert (
        Source.objects.get(pk=written.structured_content["source"]["id"]).workspace == bob.workspace
    )
    assert set(Source.objects.filter(workspace=alice.workspace)) == alices_sources


def test_oversized_results_are_cut_with_the_marker(alice, corpus, session, settings):
    settings.MCP_MAX_RESULT_CHARS = 1000
    result = call(session, alice, "search", {"query": "crane harbour fog winch", "limit": 10})
    data = result.structured_content
    assert data["truncated"] is True
    assert TRUNCATED.fullmatch(data["truncation"])
    assert len(dumps(data)) <= 1000
    text = result.content[0].text
    assert len(text) <= 1000 + len(data["truncation"]) + 1
    assert TRUNCATED.search(text)


def test_the_bound_drops_list_items_then_cuts_texts_and_says_how_much():
    items = [{"id": n, "text": "word " * 40} for n in range(50)]
    data = bound_data({"items": items, "count": 50}, limit=2000)
    assert data["truncated"] is True
    assert 1 <= len(data["items"]) < 50
    assert data["items"][0] == items[0]  # the first items are kept whole
    counted = re.search(r"\d+", data["truncation"])
    assert counted
    omitted = int(counted.group())
    assert omitted == len(dumps({"items": items, "count": 50})) - len(
        dumps({k: v for k, v in data.items() if k not in ("truncated", "truncation")})
    )
    one_text = bound_data({"text": "x" * 5000}, limit=1000)
    assert len(dumps(one_text)) <= 1000 and one_text["text"].endswith(" … ")
    small = bound_data({"items": [1, 2]}, limit=1000)
    assert small == {"items": [1, 2], "truncated": False}


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [("add_url", {}), ("crawl", {"mode": "recursive", "max_pages": 3})],
)
def test_a_loopback_url_is_refused_by_the_ssrf_guard(alice, session, settings, tool, arguments):
    settings.CRAWL_ALLOWED_NETWORKS = []  # what production runs with: no private networks
    with CrawlSite(crawl_delay=None) as site:
        started = call(session, alice, tool, {"url": site.url("/"), **arguments})
        assert not started.is_error, started.content
        source_id = started.structured_content["source"]["id"]
        do_run_crawl(source_id=source_id)  # the crawl task, as the worker runs it
        assert site.log == []  # nothing was fetched
    status = call(session, alice, "source_status", {"source_id": source_id}).structured_content
    assert status["status"] == "failed"
    assert status["follow"]["finished"] is True
    [failure] = status["failures"]
    assert "ssrf_refused" in failure["error"] and "loopback" in failure["error"]


def test_malformed_arguments_are_tool_errors_naming_the_argument(alice, corpus, session):
    cases = [
        ("search", {}, "query: Field required"),
        ("search", {"query": "x", "limit": "lots"}, "limit: Input should be a valid integer"),
        ("search", {"query": "x", "colour": "red"}, "colour: Extra inputs are not permitted"),
        ("get_entity", {"entity_id": -4}, "entity_id: Input should be greater than or equal"),
        ("list_entities", {"order": "random"}, "order: Input should be"),
        ("unmerge", {}, "give event_id (from merge_entities) or entity_id"),
        # Refused by the crawl action itself, as the API and the sources screen refuse them.
        ("crawl", {"url": "ftp://example.org/"}, "url: 'ftp://example.org/' is not an http(s) URL"),
        ("crawl", {"url": "https://example.org/", "allow": ["("]}, "allow: '(' is not a valid"),
        ("merge_entities", {"entity_ids": [1]}, "entity_ids: List should have at least 2 items"),
    ]

    async def fn(client):
        return [await client.call_tool(name, args) for name, args, _ in cases]

    for (name, _, expected), result in zip(cases, session(alice, fn), strict=True):
        assert result.is_error, (name, expected)
        assert expected in result.content[0].text, result.content[0].text
    assert AgentCall.objects.filter(ok=False, tool="search").count() == 3
    assert not Source.objects.filter(kind="crawl").exists()


def test_an_unknown_tool_or_resource_is_an_mcp_error(alice, session):
    async def fn(client):
        with pytest.raises(MCPError) as tool:
            await client.call_tool("drop_database", {})
        with pytest.raises(MCPError) as resource:
            await client.read_resource("file:///etc/passwd")
        return tool.value, resource.value

    tool, resource = session(alice, fn)
    assert tool.code == resource.code == -32602
    assert "Unknown tool 'drop_database'" in tool.message
    assert "Unknown resource" in resource.message


def _post(url: str, body: object, *, token: str | None, **headers: str) -> httpx.Response:
    sent = {"Accept": "application/json, text/event-stream", **headers}
    if token:
        sent["Authorization"] = f"Bearer {token}"
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(
        url, content=content, headers={"Content-Type": "application/json", **sent}, timeout=30
    )


def test_broken_requests_get_json_rpc_errors_not_crashes(alice, mcp_url):
    bad_params = {
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "search", "arguments": "not an object"},
    }  # fmt: skip
    # A handshake-era client (no MCP-Protocol-Version header) gets errors in a 200.
    response = _post(mcp_url, bad_params, token=alice.plaintext)
    assert (response.status_code, response.json()["error"]["code"]) == (200, -32602)
    response = _post(mcp_url, b"{not json", token=alice.plaintext)
    assert (response.status_code, response.json()["error"]["code"]) == (400, -32700)
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    assert _post(mcp_url, listing, token=alice.plaintext).status_code == 200
    assert _post(mcp_url.rstrip("/"), listing, token=alice.plaintext).status_code == 200
    for token in (None, "glm_not-a-real-token"):
        refused = _post(mcp_url, listing, token=token)
        assert refused.status_code == 401
        assert refused.headers["WWW-Authenticate"].startswith("Bearer")
        assert refused.json()["error"]["code"] == -32600
    # Cookies are not credentials here.
    assert _post(mcp_url, listing, token=None, Cookie="sessionid=abc").status_code == 401
    foreign = _post(mcp_url, listing, token=alice.plaintext, Origin="https://evil.example")
    assert foreign.status_code == 403
    for method in ("GET", "DELETE"):
        answer = httpx.request(
            method, mcp_url, headers={"Authorization": f"Bearer {alice.plaintext}"}
        )
        assert (answer.status_code, answer.headers["Allow"]) == (405, "POST")


def test_the_rate_limit_holds_per_token_and_every_call_is_logged(alice, bob, session, settings):
    settings.MCP_RATE_PER_MINUTE = 3

    async def fn(client):
        answers = [await client.call_tool("graph_stats", {}) for _ in range(3)]
        with pytest.raises(MCPError) as refused:
            await client.call_tool("graph_stats", {})
        return answers, refused.value

    answers, refused = session(alice, fn)
    assert not any(a.is_error for a in answers)
    assert refused.code == -32010
    assert "Rate limit exceeded: this token may make 3 tool calls" in refused.message
    assert not call(session, bob, "graph_stats", {}).is_error  # another token's allowance
    logged = list(AgentCall.objects.filter(token=alice.token).order_by("created_at", "pk"))
    assert [(c.tool, c.transport, c.ok, c.error) for c in logged] == [
        ("graph_stats", "http", True, ""),
    ] * 3 + [("graph_stats", "http", False, "rate_limited")]
    assert all(c.workspace_id == alice.workspace.pk and c.duration_ms >= 0 for c in logged)
