"""The MCP `crawl` tool keeps the crawl limits by role (issue 41): a token acts with its
user's role, so an editor's token is refused a crawl above CRAWL_ADMIN_ONLY_ABOVE_PAGES or
with the rate limit off, and an admin's is not. Through the official MCP client against the
live server."""

from __future__ import annotations

from ingest.models import Source
from tests.agents.conftest import call
from workspaces.models import Role


def test_an_editor_token_is_refused_a_crawl_above_the_limit_and_an_admin_token_is_not(
    alice, make_member, session
):
    editor = make_member("ed", workspace="acme", role=Role.EDITOR)
    arguments = {"url": "https://docs.example.org/", "max_pages": 5001, "name": "Docs"}

    refused = call(session, editor, "crawl", arguments)
    assert refused.is_error
    message = refused.content[0].text
    assert "Only a workspace admin may start this crawl" in message
    assert "max_pages 5,001 is above 5,000 (CRAWL_ADMIN_ONLY_ABOVE_PAGES)" in message
    assert not Source.objects.exists()

    allowed = call(session, editor, "crawl", {**arguments, "max_pages": 5000})
    assert not allowed.is_error, allowed.content
    started = call(session, alice, "crawl", arguments)
    assert not started.is_error, started.content
    assert started.structured_content["source"]["id"] != allowed.structured_content["source"]["id"]
    assert Source.objects.count() == 2
