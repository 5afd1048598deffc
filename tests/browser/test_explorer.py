"""The graph explorer in a real browser: the hubs load and are drawn, a node opens its
panel with evidence (from the accessible node list and from the canvas itself), a
double-click expands a neighbourhood, search focuses a node, the path finder shows a path,
the view's state survives a round trip through its URL, exports download, and a curation
change refreshes the graph.

Every page is watched for script errors and CSP violations (tests/browser/conftest.py).
"""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, expect

from knowledge.models import Entity, EntityState
from tests.browser.conftest import screenshot
from tests.knowledge.graph_data import make_graph
from workspaces.models import Role

ENTITIES = {
    "Ada Lovelace": "person",
    "Grace Hopper": "person",
    "Acme": "organization",
    "Globex": "organization",
    "Paris": "location",
    "Berlin": "location",
    "Loner": "concept",
}
RELATIONS = [
    ("Ada Lovelace", "Acme", "works_for"),
    ("Grace Hopper", "Globex", "works_for"),
    ("Acme", "Paris", "located_in"),
    ("Globex", "Berlin", "located_in"),
    ("Acme", "Globex", "related_to"),
]


@pytest.fixture
def lab(make_member, sign_in):
    member = make_member("ada", workspace="lab", role=Role.VIEWER)
    built = make_graph(member.workspace, entities=ENTITIES, relations=RELATIONS)
    sign_in(member)
    return built


def ids(built) -> dict[str, int]:
    return {name: entity.pk for name, entity in built.entities.items()}


def open_explorer(page: Page, query: str = "ws=lab") -> None:
    page.goto(f"/explore/?{query}")
    expect(page.locator("#explorer")).to_have_attribute("data-ready", "true")
    expect(page.locator("#graph-canvas")).to_have_attribute("data-layout", "settled")


def node_button(page: Page, entity_id: int):
    return page.locator(f'#node-list-items button[data-id="{entity_id}"]')


def show_node_list(page: Page) -> None:
    details = page.locator("#node-list")
    if details.get_attribute("open") is None:
        page.locator("#node-list summary").click()


def painted_pixels(page: Page) -> int:
    """Pixels of the canvas that are not background white (read in the test, not the app)."""
    return page.evaluate(
        """() => {
            const c = document.getElementById('graph-canvas');
            const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let n = 0;
            for (let i = 0; i < data.length; i += 4) if (data[i] < 240 || data[i + 1] < 240 || data[i + 2] < 240) n++;
            return n;
        }"""
    )


def query_of(page: Page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def test_the_hubs_are_drawn_listed_and_a_node_opens_its_panel_with_evidence(page, lab):
    known = ids(lab)
    open_explorer(page)
    assert painted_pixels(page) > 500
    show_node_list(page)
    for name, entity_id in known.items():
        expect(node_button(page, entity_id)).to_contain_text(name)
    expect(page.locator("#node-count")).to_have_text(str(len(ENTITIES)))
    expect(page.locator("#graph-status")).to_contain_text("7 nodes, 5 edges loaded")
    expect(page.locator("#stats-counts")).to_contain_text("Entities")
    expect(page.locator("#legend")).to_contain_text("organization")
    screenshot(page, "explorer")

    node_button(page, known["Acme"]).click()
    title = page.locator("#panel-title")
    expect(title).to_have_text("Acme")
    expect(title).to_be_focused()
    panel = page.locator("#panel")
    expect(panel.locator("mark").first).to_have_text("Acme")
    expect(panel.get_by_role("link", name="Fixture notes").first).to_have_attribute(
        "href", re.compile(rf"^/documents/{lab.document.pk}/\?start=\d+&end=\d+&ws=lab$")
    )
    expect(panel).to_contain_text("works_for")
    expect(panel.get_by_role("link", name="Ada Lovelace", exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(rf"focus={known['Acme']}"))
    screenshot(page, "entity-panel")

    # A relation in the panel opens the relation's panel and its evidence.
    panel.locator("[data-relation-link]").first.click()
    expect(panel.locator("[data-panel-relation]")).to_be_visible()
    expect(panel.locator("mark").first).to_contain_text("Acme")
    # Escape gives focus back to the canvas and empties the panel.
    page.locator("#panel-title").press("Escape")
    expect(page.locator("#graph-canvas")).to_be_focused()
    expect(panel).to_contain_text("Select a node or an edge")


def test_clicking_dragging_and_double_clicking_a_node_on_the_canvas(page, lab):
    known = ids(lab)
    open_explorer(page, "ws=lab&hubs=2")
    show_node_list(page)
    expect(page.locator("#node-list-items button")).to_have_count(2)
    button = node_button(page, known["Acme"])
    expect(button).to_have_attribute("data-x", re.compile(r"^-?\d+$"))
    box = page.locator("#graph-canvas").bounding_box()
    x = box["x"] + float(button.get_attribute("data-x"))
    y = box["y"] + float(button.get_attribute("data-y"))

    page.mouse.click(x, y)
    expect(page.locator("#panel-title")).to_have_text("Acme")

    page.mouse.dblclick(x, y)
    # Acme's neighbours join the two hubs: Ada Lovelace and Paris.
    expect(page.locator("#node-list-items button")).to_have_count(4)
    expect(node_button(page, known["Ada Lovelace"])).to_be_visible()
    expect(node_button(page, known["Paris"])).to_be_visible()
    expect(page).to_have_url(re.compile(rf"seeds={known['Acme']}"))

    # Dragging moves the node; the layout settles again around where it was dropped.
    canvas = page.locator("#graph-canvas")
    expect(canvas).to_have_attribute("data-layout", "settled")
    start_x = float(button.get_attribute("data-x"))
    x = box["x"] + start_x
    y = box["y"] + float(button.get_attribute("data-y"))
    page.mouse.move(x, y)
    page.mouse.down()
    for step in range(1, 11):
        page.mouse.move(x + 12 * step, y)
    page.mouse.up()
    # (the first move marked the layout running, so this waits for the new one)
    expect(canvas).to_have_attribute("data-layout", "settled")
    assert float(button.get_attribute("data-x")) > start_x + 40


def test_search_focuses_a_node_and_the_path_finder_highlights_a_path(page, lab):
    known = ids(lab)
    open_explorer(page, "ws=lab&hubs=3")
    search = page.get_by_label("Find an entity")
    search.fill("Par")
    expect(page.get_by_role("option", name=re.compile("Paris"))).to_be_visible()
    search.press("Enter")
    # Paris was not loaded: its neighbourhood is, and its panel opens.
    expect(page.locator("#panel-title")).to_have_text("Paris")
    expect(page).to_have_url(re.compile(rf"focus={known['Paris']}"))

    page.locator("#path-block summary").click()
    page.get_by_label("From", exact=True).fill("Ada")
    page.get_by_role("option", name=re.compile("Ada Lovelace")).click()
    page.get_by_label("To", exact=True).fill("Berl")
    page.get_by_role("option", name=re.compile("Berlin")).click()
    page.get_by_role("button", name="Find path").click()
    result = page.locator("#path-result")
    expect(result).to_contain_text("A path of 3 steps")
    expect(result.locator("li")).to_have_text(["Ada Lovelace", "Acme", "Globex", "Berlin"])
    expect(page).to_have_url(re.compile(rf"path={known['Ada Lovelace']}%2C{known['Berlin']}"))
    expect(page.locator("#graph-canvas")).to_have_attribute("data-layout", "settled")
    screenshot(page, "path")
    # A step of the path opens that entity.
    result.get_by_role("button", name="Globex").click()
    expect(page.locator("#panel-title")).to_have_text("Globex")


def test_the_url_state_round_trips(page, lab):
    known = ids(lab)
    state = (
        f"ws=lab&hubs=7&focus={known['Globex']}&colour=community&types=organization,person"
        "&minw=0.5&mindeg=1&z=1.2500,140.0,90.0"
    )
    open_explorer(page, state)
    expect(page.locator("#panel-title")).to_have_text("Globex")
    expect(page.get_by_label("Community")).to_be_checked()
    expect(page.locator('#filter-types input[value="person"]')).to_be_checked()
    expect(page.locator('#filter-types input[value="organization"]')).to_be_checked()
    expect(page.locator('#filter-types input[value="location"]')).not_to_be_checked()
    expect(page.get_by_label("Min. edge weight")).to_have_value("0.5")
    expect(page.get_by_label("Min. degree")).to_have_value("1")
    # Locations and the isolated concept are filtered out of the view.
    show_node_list(page)
    expect(page.locator("#node-list-items button")).to_have_count(4)
    expect(node_button(page, known["Paris"])).to_have_count(0)

    page.wait_for_function("() => new URLSearchParams(location.search).has('z')")
    written = query_of(page)
    assert written["focus"] == str(known["Globex"])
    assert written["z"] == "1.2500,140.0,90.0"
    assert written["types"] == "organization,person"
    assert written["colour"] == "community"
    assert written["minw"] == "0.5" and written["mindeg"] == "1"

    # Change the view, then load the URL it wrote: the same view comes back.
    page.get_by_label("Type", exact=True).check()
    page.locator('#filter-types input[value="location"]').check()
    page.locator('#filter-types input[value="concept"]').check()
    page.wait_for_function("() => !new URLSearchParams(location.search).has('colour')")
    page.wait_for_function("() => !new URLSearchParams(location.search).has('types')")
    shared = page.url
    page.goto("about:blank")
    page.goto(shared)
    expect(page.locator("#explorer")).to_have_attribute("data-ready", "true")
    expect(page.locator("#panel-title")).to_have_text("Globex")
    expect(page.get_by_label("Type", exact=True)).to_be_checked()
    expect(page.locator('#filter-types input[value="location"]')).to_be_checked()
    page.wait_for_function("() => new URLSearchParams(location.search).has('z')")
    assert query_of(page)["z"] == written["z"]


def test_the_view_exports_as_png_json_and_graphml(page, lab, tmp_path):
    known = ids(lab)
    open_explorer(page)
    page.locator("#export-block summary").click()
    with page.expect_download() as png:
        page.get_by_role("button", name="PNG").click()
    assert png.value.suggested_filename.endswith(".png")
    assert png.value.path().read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    with page.expect_download() as exported:
        page.get_by_role("button", name="JSON").click()
    data = json.loads(exported.value.path().read_text())
    assert {n["name"] for n in data["nodes"]} == set(ENTITIES)
    assert len(data["edges"]) == len(RELATIONS)
    assert {"x", "y", "type", "degree"} <= set(data["nodes"][0])

    with page.expect_download() as graphml:
        page.get_by_role("button", name="GraphML").click()
    text = graphml.value.path().read_text()
    assert text.startswith('<?xml version="1.0"')
    assert f'<node id="n{known["Acme"]}">' in text
    assert text.count("<edge ") == len(RELATIONS)


def test_a_curation_change_refreshes_the_loaded_graph(page, lab):
    """Curation responses trigger `graphloom:graph-changed` (HX-Trigger); the explorer drops
    what was removed and re-reads the rest. The event is dispatched here as htmx would."""
    known = ids(lab)
    open_explorer(page)
    show_node_list(page)
    expect(page.locator("#node-list-items button")).to_have_count(7)
    Entity.objects.filter(pk=known["Loner"]).update(state=EntityState.DELETED)
    Entity.objects.filter(pk=known["Acme"]).update(name="Acme Corporation")
    page.evaluate(
        """(detail) => document.body.dispatchEvent(
            new CustomEvent('graphloom:graph-changed', {detail, bubbles: true}))""",
        {"entity": known["Acme"], "removed": [known["Loner"]]},
    )
    expect(page.locator("#node-list-items button")).to_have_count(6)
    expect(node_button(page, known["Acme"])).to_contain_text("Acme Corporation")
