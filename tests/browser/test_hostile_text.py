"""Text from documents and extraction is hostile: entity names, document titles, source
names and evidence carrying markup and event handlers render as text on every screen and
run nothing. Two checks per screen: the payload is on the page as literal text, and the
marker it would set is unset. The `page` fixture adds a third: had any payload become
markup, the CSP would have refused its inline code and the test fails on that report."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from knowledge.models import MergeSuggestion
from tests.knowledge.graph_data import make_graph
from workspaces.models import Role

IMG = '<img src=x onerror="window.__pwned=1">'
SCRIPT = "<script>window.__pwned=2</script>"
HANDLER = '" autofocus onfocus="window.__pwned=3'
TITLE = '<svg onload="window.__pwned=4">Title</svg>'


@pytest.fixture
def hostile(make_member, sign_in):
    editor = make_member("erin", workspace="lab", role=Role.EDITOR)
    built = make_graph(
        editor.workspace,
        entities={IMG: "person", SCRIPT: "organization", HANDLER: "concept"},
        relations=[(IMG, SCRIPT, "works_for"), (HANDLER, SCRIPT, "related_to")],
        title=TITLE,
    )
    low, high = sorted([built.entities[IMG].pk, built.entities[HANDLER].pk])
    MergeSuggestion.objects.create(
        workspace=editor.workspace, entity_a_id=low, entity_b_id=high, score=0.9,
        reasons=[SCRIPT],
    )  # fmt: skip
    sign_in(editor)
    return built


def assert_inert(page: Page) -> None:
    assert page.evaluate("window.__pwned") is None
    assert page.locator("body img[src='x'], body svg[onload]").count() == 0


def test_hostile_names_and_titles_render_as_text_on_every_screen(page, hostile):
    page.goto("/")
    expect(page.locator("#source-list")).to_contain_text(TITLE)
    assert_inert(page)

    page.goto(f"/sources/{hostile.source.pk}/")
    expect(page.locator("main")).to_contain_text(TITLE)
    assert_inert(page)

    page.goto(f"/documents/{hostile.document.pk}/")
    expect(page.locator("main")).to_contain_text(TITLE)
    expect(page.locator("main")).to_contain_text(IMG)
    assert_inert(page)

    page.goto("/explore/")
    expect(page.locator("#graph-canvas")).to_have_attribute("data-layout", "settled")
    page.locator("#node-list summary").click()
    for name in (IMG, SCRIPT, HANDLER):
        button = page.locator(f'#node-list-items button[data-id="{hostile.entities[name].pk}"]')
        expect(button).to_contain_text(name)
    expect(page.locator("#stats-hubs")).to_contain_text(SCRIPT)
    page.locator(f'#node-list-items button[data-id="{hostile.entities[IMG].pk}"]').click()
    expect(page.locator("#panel-title")).to_have_text(IMG)
    expect(page.locator("#panel")).to_contain_text(SCRIPT)
    expect(page.locator("#panel")).to_contain_text(TITLE)
    assert_inert(page)
    page.locator("#graph-search").fill("<scr")
    expect(page.locator("#graph-search-options")).to_contain_text(SCRIPT)
    assert_inert(page)

    page.goto("/review/")
    expect(page.locator("main")).to_contain_text(IMG)
    expect(page.locator("main")).to_contain_text(HANDLER)
    expect(page.locator("main")).to_contain_text(SCRIPT)
    assert_inert(page)
