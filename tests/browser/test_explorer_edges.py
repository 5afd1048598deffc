"""Readable edges in the explorer, in a real browser: relation types along the edges once
zoomed in, arrowheads pointing at each edge's target, a hover card with the relation's
weight, evidence count and first evidence sentence, the context menu of nodes and edges (by
mouse and by keyboard), and the search box ringing every loaded node it matches.

One relation's type is markup (it reaches the type label, the card, the menu and the panel):
it must be drawn and shown as text, never run. What the renderer drew is read through the
measuring hook the page has with ?bench=1 (static/js/graph/perf.js).
"""

from __future__ import annotations

import math
import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import screenshot
from tests.browser.test_explorer import node_button, open_explorer, show_node_list
from tests.knowledge.graph_data import make_graph
from workspaces.models import Role

HOSTILE = '<img src=x onerror="window.__pwned=1">'
ENTITIES = {
    "Ada Lovelace": "person",
    "Grace Hopper": "person",
    "Acme": "organization",
    "Paris": "location",
}
RELATIONS = [
    ("Ada Lovelace", "Acme", HOSTILE),
    ("Grace Hopper", "Acme", "works_for"),
    ("Acme", "Paris", "located_in"),
]
# Type labels longer than this are cut short with an ellipsis (render.js edgeLabel).
HOSTILE_LABEL = HOSTILE[:31] + "…"
# The search highlight's ring colour (render.js MATCH_COLOUR).
MATCH_RGB = (0x70, 0x48, 0xE8)


@pytest.fixture
def lab(make_member, sign_in):
    member = make_member("ada", workspace="lab", role=Role.EDITOR)
    built = make_graph(member.workspace, entities=ENTITIES, relations=RELATIONS)
    sign_in(member)
    return built


def drawn(page: Page) -> dict:
    return page.evaluate("() => window.graphloomBench.drawn()")


def point_of(page: Page, entity_id: int) -> tuple[float, float]:
    """A node's centre on the canvas (CSS pixels from its top left), on screen or not (the
    node list lists only the nodes in view)."""
    point = page.evaluate("(id) => window.graphloomBench.screenOf(id)", entity_id)
    assert point is not None, f"entity {entity_id} is not loaded"
    return float(point[0]), float(point[1])


def on_page(page: Page, point: tuple[float, float]) -> tuple[float, float]:
    box = page.locator("#graph-canvas").bounding_box()
    assert box is not None
    return box["x"] + point[0], box["y"] + point[1]


def edge_midpoint(page: Page, source: int, target: int) -> tuple[float, float]:
    (ax, ay), (bx, by) = point_of(page, source), point_of(page, target)
    return on_page(page, ((ax + bx) / 2, (ay + by) / 2))


def fit_now(page: Page) -> None:
    """Fit the graph at once (for four nodes: zoomed in well past the labels' threshold)."""
    page.evaluate("() => window.graphloomBench.fit()")
    next_frames(page)


def still_drawing(page: Page) -> dict:
    """What the last frame drew, once two frames in a row drew the same."""
    before = drawn(page)
    for _ in range(100):
        next_frames(page)
        now = drawn(page)
        if now == before:
            return now
        before = now
    raise AssertionError("the view kept moving")


def next_frames(page: Page) -> None:
    """Wait for two animation frames: whatever was asked to be drawn has been."""
    page.evaluate(
        "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"
    )


def assert_inert(page: Page) -> None:
    assert page.evaluate("() => window.__pwned") is None
    expect(page.locator("img[src=x]")).to_have_count(0)


def match_pixels(page: Page) -> int:
    """Canvas pixels in the search ring's colour (read in the test, not the app)."""
    return page.evaluate(
        """([r, g, b]) => {
            const c = document.getElementById('graph-canvas');
            const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let n = 0;
            for (let i = 0; i < data.length; i += 4) {
                if (Math.abs(data[i] - r) < 14 && Math.abs(data[i + 1] - g) < 14 && Math.abs(data[i + 2] - b) < 14) n++;
            }
            return n;
        }""",
        list(MATCH_RGB),
    )


def test_edge_labels_and_arrows_appear_when_zoomed_in_and_point_at_the_target(page, lab):
    ada, acme = lab.entities["Ada Lovelace"].pk, lab.entities["Acme"].pk
    # Zoomed far out: no type labels, no arrowheads.
    open_explorer(page, "ws=lab&bench=1&z=0.2000,300.0,300.0")
    canvas = page.locator("#graph-canvas")
    expect(canvas).to_have_attribute("data-edge-labels", "0")
    assert drawn(page) == {"arrows": [], "edgeLabels": []}

    show_node_list(page)
    fit_now(page)
    # Closer still until the types have room along their edges (at most 12x: the zoom's limit).
    zoom_in = page.get_by_role("button", name="Zoom in")
    for _ in range(4):
        if drawn(page)["edgeLabels"]:
            break
        zoom_in.click()
        next_frames(page)
    shown = drawn(page)
    # Types are drawn where they fit along their edge, clear of the nodes' labels.
    labels = {label["text"] for label in shown["edgeLabels"]}
    assert labels and labels <= {"works_for", "located_in", HOSTILE_LABEL}
    assert len(shown["arrows"]) == len(RELATIONS)
    expect(canvas).to_have_attribute("data-edge-labels", str(len(labels)))
    screenshot(page, "explorer-edges")

    # Each arrowhead's tip sits at its edge's target end, not at its source (read once the
    # view stands still: the zoom buttons animate, and the nodes may leave the list's view).
    shown = still_drawing(page)
    ends = {e: (point_of(page, a), point_of(page, b)) for e, a, b in edge_ends(page)}
    for arrow in shown["arrows"]:
        source, target = ends[arrow["id"]]
        tip = (arrow["x"], arrow["y"])
        assert math.dist(tip, target) < math.dist(tip, source) - 10
        assert math.dist(tip, target) < 40
    assert (ada, acme) in {(a, b) for _, a, b in edge_ends(page)}
    assert_inert(page)


def edge_ends(page: Page) -> list[tuple[int, int, int]]:
    """(relation id, source id, target id) of each loaded edge."""
    edges = page.evaluate("() => window.graphloomBench.edges()")
    return [(edge["id"], edge["source"], edge["target"]) for edge in edges]


def test_the_hover_card_shows_type_weight_and_evidence_as_text(page, lab):
    ada, acme = lab.entities["Ada Lovelace"].pk, lab.entities["Acme"].pk
    open_explorer(page, "ws=lab&bench=1")
    show_node_list(page)
    fit_now(page)
    page.mouse.move(*edge_midpoint(page, ada, acme))
    card = page.locator("#graph-edge-card")
    expect(card).to_be_visible()
    expect(card.locator(".edge-card-type")).to_have_text(HOSTILE)
    expect(card.locator(".edge-card-ends")).to_have_text("Ada Lovelace → Acme")
    expect(card.locator(".edge-card-meta")).to_have_text("weight 0.8 · 1 evidence row")
    expect(card.locator(".edge-card-evidence")).to_have_text(f"“Ada Lovelace {HOSTILE} Acme.”")
    # The hovered edge's label is drawn whatever the zoom, and the card is only text.
    assert HOSTILE_LABEL in {label["text"] for label in drawn(page)["edgeLabels"]}
    expect(card.locator("*")).to_have_count(4)
    screenshot(page, "explorer-edge-card")
    assert_inert(page)

    # Leaving the edge hides the card.
    page.mouse.move(*on_page(page, (5, 5)))
    expect(card).to_be_hidden()


def test_the_node_context_menu_opens_pins_hides_and_asks(page, lab):
    acme, paris = lab.entities["Acme"].pk, lab.entities["Paris"].pk
    open_explorer(page, "ws=lab&bench=1")
    show_node_list(page)
    fit_now(page)
    menu = page.get_by_role("menu")

    page.mouse.click(*on_page(page, point_of(page, acme)), button="right")
    expect(menu).to_be_visible()
    expect(menu.get_by_role("menuitem")).to_have_text(
        ["Open panel", "Expand", "Hide", "Pin", "Find passages in Ask", "Curate"]
    )
    expect(menu.get_by_role("menuitem").first).to_be_focused()
    menu.get_by_role("menuitem", name="Pin").click()
    expect(menu).to_be_hidden()
    page.mouse.click(*on_page(page, point_of(page, acme)), button="right")
    expect(menu.get_by_role("menuitem", name="Unpin")).to_be_visible()
    screenshot(page, "explorer-context-menu")
    menu.get_by_role("menuitem", name="Open panel").click()
    expect(page.locator("#panel-title")).to_have_text("Acme")

    # From the keyboard: Shift+F10 on a node of the list; Escape gives focus back.
    paris_button = node_button(page, paris)
    paris_button.focus()
    page.keyboard.press("Shift+F10")
    expect(menu).to_be_visible()
    expect(menu).to_have_attribute("aria-label", "Node: Paris")
    page.keyboard.press("ArrowDown")
    expect(menu.get_by_role("menuitem", name="Expand")).to_be_focused()
    page.keyboard.press("Escape")
    expect(menu).to_be_hidden()
    expect(paris_button).to_be_focused()

    # Hide takes the node (and its edges) out of the view until "Show hidden".
    paris_button.focus()
    page.keyboard.press("Shift+F10")
    page.keyboard.press("End")
    for _ in range(3):
        page.keyboard.press("ArrowUp")
    expect(menu.get_by_role("menuitem", name="Hide")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#node-count")).to_have_text(str(len(ENTITIES) - 1))
    expect(node_button(page, paris)).to_have_count(0)
    page.get_by_role("button", name="Show 1 hidden").click()
    expect(page.locator("#node-count")).to_have_text(str(len(ENTITIES)))

    # Find passages in Ask: the Ask box's answer in the side panel, for the entity's name.
    node_button(page, acme).focus()
    page.keyboard.press("Shift+F10")
    menu.get_by_role("menuitem", name="Find passages in Ask").click()
    expect(page.locator("#graph-ask")).to_have_value("Acme")
    # (the first question of a process loads the retrieval models: allow it time)
    expect(page.locator("#panel a.ask-full")).to_have_attribute(
        "href", re.compile(r"q=Acme"), timeout=60_000
    )

    # Curate: the entity's panel at its curation tools.
    node_button(page, acme).focus()
    page.keyboard.press("Shift+F10")
    menu.get_by_role("menuitem", name="Curate").click()
    expect(page.locator("#panel-title")).to_have_text("Acme")
    expect(page.locator("#panel .curation").first).to_be_in_viewport()


def test_the_edge_context_menu_opens_the_relation_and_its_name_is_inert(page, lab):
    ada, acme = lab.entities["Ada Lovelace"].pk, lab.entities["Acme"].pk
    open_explorer(page, "ws=lab&bench=1")
    show_node_list(page)
    fit_now(page)
    menu = page.get_by_role("menu")
    middle = edge_midpoint(page, ada, acme)
    page.mouse.click(*middle, button="right")
    expect(menu).to_be_visible()
    expect(menu).to_have_attribute("aria-label", f"Edge: Ada Lovelace {HOSTILE} Acme")
    expect(menu.get_by_role("menuitem")).to_have_text(
        ["Open panel", "Hide", "Find passages in Ask", "Curate"]
    )
    menu.get_by_role("menuitem", name="Open panel").click()
    panel = page.locator("#panel [data-panel-relation]")
    expect(panel).to_be_visible()
    expect(page.locator("#panel .type-badge")).to_have_text(HOSTILE)
    assert_inert(page)

    page.mouse.click(*middle, button="right")
    menu.get_by_role("menuitem", name="Find passages in Ask").click()
    expect(page.locator("#graph-ask")).to_have_value("Ada Lovelace Acme")

    page.mouse.click(*middle, button="right")
    menu.get_by_role("menuitem", name="Hide").click()
    page.mouse.move(*middle)
    expect(page.get_by_role("button", name="Show 1 hidden")).to_be_visible()
    expect(page.locator("#graph-edge-card")).to_be_hidden()
    assert_inert(page)


def test_the_search_box_rings_every_loaded_node_it_matches(page, lab):
    open_explorer(page, "ws=lab&bench=1")
    fit_now(page)
    count = page.locator("#graph-search-matches")
    assert match_pixels(page) == 0
    search = page.get_by_label("Find an entity")
    search.fill("a")
    expected = sum("a" in name.lower() for name in ENTITIES)
    expect(count).to_have_text(f"{expected} loaded nodes match")
    expect(count).to_have_attribute("data-count", str(expected))
    next_frames(page)
    assert match_pixels(page) > 50
    screenshot(page, "explorer-search-highlight")
    search.fill("hopper")
    expect(count).to_have_text("1 loaded node matches")
    search.fill("")
    expect(count).to_have_text("")
    next_frames(page)
    assert match_pixels(page) == 0
