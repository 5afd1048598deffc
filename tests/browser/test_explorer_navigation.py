"""Finding your way in the explorer, in a real browser: the minimap moves the view to where
it is clicked and remembers being hidden, F fits the selected node and its neighbours,
] and [ walk the selected node's neighbours in a stable order and the live region says
where the walk is, Alt+Arrow goes to the neighbour that way, Backspace goes back, Enter
opens the panel, the keys are not taken from a text field, and the "Nodes in view" list
counts and lists only what the view shows.

The view's transform is read from the address (z=k,x,y, written by state.js) and node
positions from the list's buttons (data-x / data-y, canvas pixels), so nothing here reaches
into the page's modules.
"""

from __future__ import annotations

import itertools
import math
import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import screenshot
from tests.knowledge.graph_data import make_graph
from workspaces.models import Role

FILLERS = [f"Item {n:02d}" for n in range(1, 25)]
ENTITIES = {
    "Acme": "organization",
    "Ada Lovelace": "person",
    "Grace Hopper": "person",
    "Paris": "location",
    "Berlin": "location",
    "Globex": "organization",
    **dict.fromkeys(FILLERS, "concept"),
}
RELATIONS = [
    ("Ada Lovelace", "Acme", "works_for"),
    ("Grace Hopper", "Acme", "works_for"),
    ("Acme", "Paris", "located_in"),
    ("Paris", "Berlin", "related_to"),
    ("Globex", "Berlin", "located_in"),
    ("Grace Hopper", "Globex", "works_for"),
    # A long chain off Berlin: the whole graph is much wider than any one neighbourhood.
    ("Berlin", FILLERS[0], "related_to"),
    *[(a, b, "related_to") for a, b in itertools.pairwise(FILLERS)],
]
# Acme's neighbours as ] walks them: every link weighs the same here, so best-connected
# first (Grace Hopper and Paris have two links each, by name), then Ada Lovelace.
ACME_RING = ["Grace Hopper", "Paris", "Ada Lovelace"]
FIT_MAX_SCALE = 2.5  # a fit zooms in no further (render.js, fitTransform)


@pytest.fixture
def lab(make_member, sign_in):
    member = make_member("ada", workspace="lab", role=Role.VIEWER)
    built = make_graph(member.workspace, entities=ENTITIES, relations=RELATIONS)
    sign_in(member)
    return {name: entity.pk for name, entity in built.entities.items()}


def open_explorer(page: Page, query: str = "ws=lab") -> None:
    page.goto(f"/explore/?{query}")
    expect(page.locator("#explorer")).to_have_attribute("data-ready", "true")
    expect(page.locator("#graph-canvas")).to_have_attribute("data-layout", "settled")
    show_node_list(page)
    # (opening the list shrinks the canvas; the graph, fitted as it settled, is fitted again)
    expect(page.locator("#node-count")).to_have_text(str(len(ENTITIES)))
    wait_for_view_still(page)


def show_node_list(page: Page) -> None:
    if page.locator("#node-list").get_attribute("open") is None:
        page.locator("#node-list summary").click()


def node_button(page: Page, entity_id: int):
    return page.locator(f'#node-list-items button[data-id="{entity_id}"]')


def transform(page: Page) -> tuple[float, float, float]:
    """The view's zoom and pan (k, x, y) as the address has it."""
    z = parse_qs(urlparse(page.url).query).get("z", ["1,0,0"])[0]
    k, x, y = (float(part) for part in z.split(","))
    return k, x, y


def wait_for_transform_change(page: Page, before: tuple[float, float, float]) -> None:
    """Until the address holds a transform other than `before` and it stops moving."""
    page.wait_for_function(
        """(before) => {
            const z = new URL(location.href).searchParams.get('z');
            if (!z) return false;
            const now = z.split(',').map(Number);
            if (now.every((v, i) => Math.abs(v - before[i]) < 1e-3)) return false;
            const moved = window.__navLastZ !== z;
            window.__navLastZ = z;
            return !moved;
        }""",
        arg=list(before),
        polling=300,
    )


def wait_for_view_still(page: Page) -> None:
    """Until the address's transform has not moved for three reads 300 ms apart (a reveal
    or a fit animates; the address follows within 200 ms)."""
    page.evaluate("() => { window.__navStill = undefined; }")
    page.wait_for_function(
        """() => {
            const z = new URL(location.href).searchParams.get('z');
            if (window.__navStill !== z) {
                window.__navStill = z;
                window.__navStillReads = 0;
                return false;
            }
            window.__navStillReads += 1;
            return window.__navStillReads >= 2;
        }""",
        polling=300,
    )


def zoom_by_keys(page: Page, key: str, times: int) -> None:
    canvas = page.locator("#graph-canvas")
    canvas.focus()
    before = transform(page)
    for _ in range(times):
        canvas.press(key)
    wait_for_transform_change(page, before)


def wait_for_list_positions(page: Page) -> None:
    """Until the list's buttons hold the positions of the view as it now stands (they are
    refreshed as a zoom ends and at most every 250 ms): two reads 300 ms apart agree."""
    page.wait_for_function(
        """() => {
            const now = [...document.querySelectorAll('#node-list-items button')]
                .map((b) => `${b.dataset.id}:${b.dataset.x}:${b.dataset.y}`).join();
            const same = window.__navLastPositions === now;
            window.__navLastPositions = now;
            return same;
        }""",
        polling=300,
    )


def screen_position(page: Page, entity_id: int) -> tuple[float, float]:
    button = node_button(page, entity_id)
    return float(button.get_attribute("data-x")), float(button.get_attribute("data-y"))


def select_from_list(page: Page, entity_id: int, name: str) -> None:
    """Select a node the way a keyboard user does first (its button in the list), then give
    the canvas the focus for the navigation keys."""
    node_button(page, entity_id).click()
    expect(page.locator("#panel-title")).to_have_text(name)
    wait_for_view_still(page)  # (the click reveals the node: wait for that move to end)
    page.locator("#graph-canvas").focus()


# --- the minimap ----------------------------------------------------------------------------------


def test_the_minimap_appears_when_zoomed_in_and_a_click_on_it_centres_the_view_there(page, lab):
    open_explorer(page)
    minimap = page.locator("#graph-minimap")
    # The whole graph is in view: no map needed.
    expect(minimap).to_be_hidden()

    zoom_by_keys(page, "+", 4)
    expect(minimap).to_be_visible()
    screenshot(page, "explorer-minimap")

    # Click near the minimap's top-left corner: that point of the graph becomes the centre.
    scale = float(minimap.get_attribute("data-scale"))
    ox = float(minimap.get_attribute("data-ox"))
    oy = float(minimap.get_attribute("data-oy"))
    box = page.locator("#graph-minimap-canvas").bounding_box()
    # (the canvas's size as the click finds it: the list below follows the view and may
    # then change height, and the canvas with it, without moving the view)
    canvas = page.locator("#graph-canvas").bounding_box()
    mx, my = 25.0, 20.0
    world = ((mx - ox) / scale, (my - oy) / scale)
    before = transform(page)
    page.mouse.click(box["x"] + mx, box["y"] + my)
    wait_for_transform_change(page, before)

    k, x, y = transform(page)
    assert k == pytest.approx(before[0], rel=1e-3)  # a pan, not a zoom
    # (to within a pixel of the minimap: where a click lands is rounded)
    centre = ((canvas["width"] / 2 - x) / k, (canvas["height"] / 2 - y) / k)
    assert centre == pytest.approx(world, abs=1 / scale)

    # Dragging in it pans along.
    before = transform(page)
    page.mouse.move(box["x"] + mx, box["y"] + my)
    page.mouse.down()
    for step in range(1, 6):
        page.mouse.move(box["x"] + mx + 20 * step, box["y"] + my + 10 * step)
    page.mouse.up()
    wait_for_transform_change(page, before)
    k, x, y = transform(page)
    # (across: exactly there; down: the canvas's height may have changed under the drag)
    assert (canvas["width"] / 2 - x) / k == pytest.approx((mx + 100 - ox) / scale, abs=1 / scale)
    assert y < before[2] - 40 * k / scale


def test_hiding_the_minimap_is_remembered_across_visits(page, lab):
    open_explorer(page)
    zoom_by_keys(page, "+", 4)
    minimap = page.locator("#graph-minimap")
    toggle = page.locator("#minimap-toggle")
    expect(minimap).to_be_visible()
    expect(toggle).to_have_attribute("aria-pressed", "true")

    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "false")
    expect(minimap).to_be_hidden()

    page.reload()
    expect(page.locator("#explorer")).to_have_attribute("data-ready", "true")
    expect(page.locator("#graph-canvas")).to_have_attribute("data-layout", "settled")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    zoom_by_keys(page, "+", 4)
    expect(minimap).to_be_hidden()

    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    expect(minimap).to_be_visible()


# --- fit selection --------------------------------------------------------------------------------


def test_f_fits_the_selected_node_and_its_neighbours(page, lab):
    open_explorer(page)
    select_from_list(page, lab["Berlin"], "Berlin")
    zoom_by_keys(page, "-", 3)
    zoomed_out = transform(page)

    page.locator("#graph-canvas").press("f")
    wait_for_transform_change(page, zoomed_out)
    expect(page.locator("#graph-announce")).to_have_text("Fitted Berlin and 3 loaded neighbours.")

    k, _x, _y = transform(page)
    assert k > zoomed_out[0] * 2
    canvas = page.locator("#graph-canvas").bounding_box()
    fitted = [lab["Berlin"], lab["Paris"], lab["Globex"], lab["Item 01"]]
    wait_for_list_positions(page)
    points = [screen_position(page, entity_id) for entity_id in fitted]
    for px, py in points:
        assert 0 <= px <= canvas["width"] and 0 <= py <= canvas["height"]
    # ...and fitted: their box is centred in the canvas and fills one of its dimensions,
    # unless that would zoom in beyond the fit's limit.
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    assert (min(xs) + max(xs)) / 2 == pytest.approx(canvas["width"] / 2, abs=30)
    assert (min(ys) + max(ys)) / 2 == pytest.approx(canvas["height"] / 2, abs=30)
    fills = max(xs) - min(xs) > canvas["width"] / 2 or max(ys) - min(ys) > canvas["height"] / 2
    assert fills or k == pytest.approx(FIT_MAX_SCALE, rel=1e-3)
    # What the fitted view leaves out is out of the list: every node listed but the selected
    # one is in view, and the chain's far end is not all in it. (Where the chain's far end
    # lies depends on the layout, which may fold the chain back towards Berlin.)
    listed = page.locator("#node-list-items button[data-id]")
    ids = [int(b.get_attribute("data-id")) for b in listed.all()]
    assert 4 <= len(ids) < len(ENTITIES)
    for entity_id in set(ids) - {lab["Berlin"]}:
        px, py = screen_position(page, entity_id)
        assert -2 <= px <= canvas["width"] + 2 and -2 <= py <= canvas["height"] + 2


def test_the_fit_selection_button_fits_the_search_matches_with_nothing_selected(page, lab):
    open_explorer(page)
    zoom_by_keys(page, "-", 3)
    zoomed_out = transform(page)
    page.locator("#graph-search").fill("Globex")
    expect(page.locator("#graph-search-matches")).to_contain_text("1 loaded node")

    page.locator("#fit-selection").click()
    wait_for_transform_change(page, zoomed_out)
    expect(page.locator("#graph-announce")).to_have_text("Fitted the 1 search match.")
    assert transform(page)[0] > zoomed_out[0]
    wait_for_list_positions(page)
    canvas = page.locator("#graph-canvas").bounding_box()
    gx, gy = screen_position(page, lab["Globex"])
    assert (gx, gy) == pytest.approx((canvas["width"] / 2, canvas["height"] / 2), abs=4)


# --- walking the neighbours -----------------------------------------------------------------------


def test_brackets_walk_the_neighbours_and_backspace_and_enter(page, lab):
    open_explorer(page)
    announcer = page.locator("#graph-announce")
    select_from_list(page, lab["Acme"], "Acme")
    canvas = page.locator("#graph-canvas")

    for at, name in enumerate(ACME_RING, start=1):
        canvas.press("]")
        expect(announcer).to_contain_text(
            f"Selected {name} ({ENTITIES[name]}), {at} of 3 neighbours of Acme"
        )
        expect(node_button(page, lab[name])).to_have_attribute("aria-current", "true")
    # Round again, and back the other way.
    canvas.press("]")
    expect(announcer).to_contain_text("Selected Grace Hopper (person), 1 of 3 neighbours of Acme")
    canvas.press("[")
    expect(announcer).to_contain_text("Selected Ada Lovelace (person), 3 of 3 neighbours of Acme")
    # The panel stays on Acme while walking: it follows only on Enter.
    expect(page.locator("#panel-title")).to_have_text("Acme")
    expect(page).to_have_url(re.compile(rf"[?&]focus={lab['Ada Lovelace']}(&|$)"))

    # Backspace retraces the walk: Grace Hopper, Ada Lovelace, Paris, Grace Hopper, Acme.
    for name in ["Grace Hopper", "Ada Lovelace", "Paris", "Grace Hopper", "Acme"]:
        canvas.press("Backspace")
        expect(announcer).to_contain_text(f"Selected {name} ({ENTITIES[name]}), back")
        expect(node_button(page, lab[name])).to_have_attribute("aria-current", "true")
    canvas.press("Backspace")
    expect(announcer).to_have_text("No earlier selection.")

    canvas.press("]")
    expect(announcer).to_contain_text("Selected Grace Hopper (person), 1 of 3")
    canvas.press("Enter")
    expect(page.locator("#panel-title")).to_have_text("Grace Hopper")
    expect(page.locator("#panel-title")).to_be_focused()


def test_alt_arrow_moves_to_the_neighbour_lying_that_way(page, lab):
    open_explorer(page)
    announcer = page.locator("#graph-announce")
    select_from_list(page, lab["Acme"], "Acme")
    ax, ay = screen_position(page, lab["Acme"])
    around = {name: screen_position(page, lab[name]) for name in ACME_RING}
    # The direction pointing most nearly at one of the neighbours, and that neighbour.
    directions = {
        "ArrowRight": (1, 0),
        "ArrowLeft": (-1, 0),
        "ArrowDown": (0, 1),
        "ArrowUp": (0, -1),
    }
    best = None
    for key, (dx, dy) in directions.items():
        for name, (x, y) in around.items():
            distance = math.hypot(x - ax, y - ay)
            cos = ((x - ax) * dx + (y - ay) * dy) / distance
            if best is None or cos > best[0]:
                best = (cos, key, name)
    assert best is not None and best[0] > 0.75  # (three neighbours: one is within 41 degrees)
    _cos, key, name = best

    page.locator("#graph-canvas").press(f"Alt+{key}")
    expect(announcer).to_contain_text(f"Selected {name} ({ENTITIES[name]}), a neighbour of Acme")
    expect(node_button(page, lab[name])).to_have_attribute("aria-current", "true")


def test_the_navigation_keys_are_not_taken_from_a_text_field(page, lab):
    open_explorer(page)
    select_from_list(page, lab["Acme"], "Acme")
    search = page.locator("#graph-search")
    search.focus()
    before = transform(page)
    page.keyboard.type("f]")
    page.keyboard.press("Backspace")
    expect(search).to_have_value("f")
    page.wait_for_timeout(500)
    assert transform(page) == before
    expect(page.locator("#graph-announce")).to_have_text("")
    expect(node_button(page, lab["Acme"])).to_have_attribute("aria-current", "true")


# --- the node list in step with the view ----------------------------------------------------------


def test_the_node_list_counts_and_lists_only_the_nodes_in_view(page, lab):
    open_explorer(page)
    total = str(len(ENTITIES))
    expect(page.locator("#node-total")).to_have_text(total)
    expect(page.locator("#node-count")).to_have_text(total)
    expect(page.locator("#node-list-items button")).to_have_count(len(ENTITIES))

    # Zoomed in on the best-connected node (the list's first): it stays in view, others
    # leave it (zooming on the middle of the view could land between nodes).
    first = page.locator("#node-list-items button").first
    canvas_box = page.locator("#graph-canvas").bounding_box()
    assert canvas_box is not None
    at = (
        canvas_box["x"] + float(first.get_attribute("data-x") or 0),
        canvas_box["y"] + float(first.get_attribute("data-y") or 0),
    )
    before = transform(page)
    page.mouse.move(*at)
    for _ in range(4):
        page.mouse.wheel(0, -300)
        page.wait_for_timeout(100)
    wait_for_transform_change(page, before)
    expect(page.locator("#node-count")).not_to_have_text(total)
    in_view = int(page.locator("#node-count").inner_text())
    assert 0 < in_view < len(ENTITIES)
    expect(page.locator("#node-list-items button")).to_have_count(in_view)
    expect(page.locator("#node-total")).to_have_text(total)
    # Every listed node is inside the canvas.
    canvas = page.locator("#graph-canvas").bounding_box()
    for button in page.locator("#node-list-items button").all():
        x = float(button.get_attribute("data-x"))
        y = float(button.get_attribute("data-y"))
        assert -1 <= x <= canvas["width"] + 1 and -1 <= y <= canvas["height"] + 1

    # Panning the view changes what is listed.
    listed = page.locator("#node-list-items button").evaluate_all(
        "(bs) => bs.map((b) => b.dataset.id)"
    )
    zoom_by_keys(page, "ArrowLeft", 12)
    page.wait_for_function(
        "(before) => [...document.querySelectorAll('#node-list-items button')].map((b) => b.dataset.id).join() !== before.join()",
        arg=listed,
    )
