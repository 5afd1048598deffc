"""The explorer at scale in a real browser (issue 19): a workspace of 20,000 entities and
40,000 relations loads whole into the explorer (the compact bulk payload, drawn on the
canvas) and a click on a node selects it and shows its panel. How fast (issue 19: within a
second, from the click event to the frame showing the panel) is the explorer benchmark's
figure (bench/explorer.py): a test does not bound wall-clock time.

The graph is loaded set-based in SQL (bench/graph_run.py's generator: power-law degrees,
the default types), as the explorer benchmark does; the page's measuring hook (bench=1,
static/js/graph/perf.js) says where the best-connected node is on screen.
"""

from __future__ import annotations

import math
import re

import pytest
from playwright.sync_api import expect

from bench.explorer import CLICK_TO_PANEL
from bench.graph_run import load_graph
from knowledge.actions.schema import do_ensure_default_schema
from workspaces.models import Role

ENTITIES = 20_000
RELATIONS = 40_000


@pytest.fixture
def big(make_member, sign_in):
    member = make_member("ada", workspace="big", role=Role.VIEWER)
    do_ensure_default_schema(workspace=member.workspace)
    load_graph(member.workspace, entities=ENTITIES, relations=RELATIONS, seed=19)
    sign_in(member)
    return member.workspace


@pytest.mark.slow(reason="20,000 nodes written, then loaded in Chromium")
def test_a_20k_node_graph_loads_and_a_click_on_a_node_shows_its_panel(page, big):
    page.goto(f"/explore/?ws={big.slug}&hubs={ENTITIES}&bench=1")
    expect(page.locator("#explorer")).to_have_attribute("data-ready", "true", timeout=60_000)
    page.wait_for_function(
        "() => window.graphloomBench && window.graphloomBench.marks.firstPaint !== null",
        timeout=60_000,
    )
    assert page.evaluate("graphloomBench.counts()") == {"nodes": ENTITIES, "edges": RELATIONS}
    # A node only stays under the pointer once the layout has stopped moving it.
    canvas = page.locator("#graph-canvas")
    expect(canvas).to_have_attribute("data-layout", "settled", timeout=180_000)
    hub = page.evaluate("graphloomBench.hub()")
    assert hub is not None
    box = canvas.bounding_box()
    assert box is not None
    page.evaluate(CLICK_TO_PANEL, hub["name"])
    page.mouse.click(box["x"] + hub["x"], box["y"] + hub["y"])
    # The node selected, its panel titled (load time is not what this test bounds: generous).
    expect(page.locator("#panel-title")).to_have_text(hub["name"], timeout=30_000)
    expect(page).to_have_url(re.compile(rf"focus={hub['id']}\b"))
    # The page timed the click to the frame showing the panel (issue 19 asks for under a
    # second): a figure of the explorer benchmark (bench/explorer.py, "click_to_panel_ms"),
    # not a bound here, where the time depends on what else the machine runs.
    answered = page.wait_for_function("() => window.clickToPanel || false").json_value()
    assert answered["ms"] > 0, answered


# A ring of the selection's colour (render.js HIGHLIGHT, #2f5fd0) 4.5 screen pixels beyond a
# node's rim, at `r` the node's radius on screen: how many of four points around it show it.
RINGED = """([x, y, r]) => [0, 1, 2, 3].filter((quarter) => {
  const angle = quarter * Math.PI / 2 + Math.PI / 4;
  const [red, green, blue] = graphloomBench.pixel(
    x + (r + 4.5) * Math.cos(angle), y + (r + 4.5) * Math.sin(angle));
  return Math.abs(red - 47) < 16 && Math.abs(green - 95) < 16 && Math.abs(blue - 208) < 16;
}).length"""


@pytest.fixture
def large(make_member, sign_in):
    """Above the size from which a drag moves only the dragged node's surroundings
    (layout-worker.js LOCAL_DRAG_ABOVE, 1,500)."""
    member = make_member("ada", workspace="large", role=Role.VIEWER)
    do_ensure_default_schema(workspace=member.workspace)
    load_graph(member.workspace, entities=3_000, relations=6_000, seed=19)
    sign_in(member)
    return member.workspace


@pytest.mark.slow(reason="3,000 nodes laid out, dragged and laid out again in Chromium")
def test_a_drag_redraws_only_what_moves_and_keeps_the_selection_right(page, large):
    page.goto(f"/explore/?ws={large.slug}&hubs=3000&bench=1")
    canvas = page.locator("#graph-canvas")
    expect(canvas).to_have_attribute("data-layout", "settled", timeout=120_000)
    box = canvas.bounding_box()
    assert box is not None
    hub = page.evaluate("graphloomBench.hub()")
    page.mouse.click(box["x"] + hub["x"], box["y"] + hub["y"])
    expect(page.locator("#panel-title")).to_have_text(hub["name"], timeout=30_000)
    page.wait_for_timeout(500)  # the panel may have narrowed the canvas
    box = canvas.bounding_box()
    assert box is not None
    hub = page.evaluate("graphloomBench.hub()")
    start = (hub["x"], hub["y"])
    end = (hub["x"] - 140, hub["y"] + 90)
    before = page.evaluate("graphloomBench.layers()")
    page.mouse.move(box["x"] + start[0], box["y"] + start[1])
    page.mouse.down()
    for step in range(1, 31):
        x = start[0] + (end[0] - start[0]) * step / 30
        y = start[1] + (end[1] - start[1]) * step / 30
        page.mouse.move(box["x"] + x, box["y"] + y)
    page.wait_for_timeout(400)
    # Mid-drag: frames are the still layer plus the moving nodes, and the selection ring
    # follows the dragged node (drawn where it is now, not where the layer was taken).
    during = page.evaluate("graphloomBench.layers()")
    assert during["moving"] - before["moving"] >= 5
    assert 1 <= during["still"] - before["still"] <= 3
    assert page.evaluate(RINGED, [end[0], end[1], hub["r"]]) >= 3
    # No ring left behind where the drag started: a ring there shows at all four sample
    # points, while a highlighted edge of the hub crossing the spot may colour one or two.
    assert page.evaluate(RINGED, [start[0], start[1], hub["r"]]) < 3
    page.mouse.up()
    expect(canvas).to_have_attribute("data-layout", "settled", timeout=60_000)
    # After it (released, the layout cooled: the node may have been pulled back towards its
    # neighbours), a click where it is finds it, the ring is drawn there and nowhere else, it
    # is still the selection and its panel still open.
    after = page.evaluate("graphloomBench.hub()")
    assert after["id"] == hub["id"]
    assert page.evaluate(RINGED, [after["x"], after["y"], after["r"]]) >= 3
    for left in (start, end):
        if math.dist(left, (after["x"], after["y"])) > 2 * after["r"] + 12:
            assert page.evaluate(RINGED, [left[0], left[1], after["r"]]) == 0
    expect(page.locator("#panel-title")).to_have_text(hub["name"])
    expect(page).to_have_url(re.compile(rf"focus={hub['id']}\b"))
