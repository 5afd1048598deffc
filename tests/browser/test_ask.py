"""The Ask page in the real browser: question → highlighted passages (hostile text inert)
→ "show in graph" loads the entities in the explorer → the evidence span opens."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from ingest.actions.sources import do_create_text_source, validate_source_options
from tests.browser.conftest import screenshot
from tests.support import run_pending
from workspaces.models import Role

IMG = '<img src=x onerror="window.__pwned=1">'
SCRIPT = "<script>window.__pwned=2</script>"
TEXT = (
    "Marta Olsen repaired the harbour crane in Bergen for Nordic Cranes AS. "
    f"The repair log says {IMG} and {SCRIPT}."
)


@pytest.fixture
def crane(make_member, sign_in):
    viewer = make_member("vera", workspace="lab", role=Role.VIEWER)
    source, _ = do_create_text_source(
        workspace=viewer.workspace, title="crane", text=TEXT, options=validate_source_options()
    )
    run_pending(source)
    sign_in(viewer)
    return viewer


def assert_inert(page: Page) -> None:
    assert page.evaluate("window.__pwned") is None
    assert page.locator("body img[src='x']").count() == 0


def test_a_question_shows_passages_then_the_graph_then_the_evidence_span(page, crane):
    page.goto("/explore/")
    page.fill("#graph-ask", "Who repaired the harbour crane?")
    page.click("form[action='/ask/'] button")
    expect(page.locator(".passage").first).to_contain_text("Marta Olsen")
    expect(page.locator(".passage mark").first).to_be_visible()
    expect(page.locator(".passage").first).to_contain_text(IMG)
    assert "q=Who+repaired" in page.url
    assert_inert(page)
    screenshot(page, "ask-passages")

    page.click("a.show-in-graph")
    expect(page.locator("#graph-canvas")).to_have_attribute("data-layout", "settled")
    assert "seeds=" in page.url
    assert_inert(page)

    page.go_back()
    page.click(".passage a.evidence")
    expect(page.locator("main")).to_contain_text("Marta Olsen")
    assert "start=" in page.url
    assert_inert(page)
