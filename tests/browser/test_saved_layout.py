"""Layouts that persist, in a real browser (static/js/graph/layouts.js): a settled layout
is saved for its view, reopening the view puts every node exactly where it was saved
without simulating again, and an entity that is new since the save is placed next to its
neighbour. The page's positions are read through its ?bench=1 hook and compared with what
the server stored (GET …/layouts)."""

from __future__ import annotations

import math
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect

from knowledge.models import Relation, RelationType
from tests.knowledge.graph_data import make_graph
from workspaces.models import Role

ENTITIES = {
    "Ada Lovelace": "person",
    "Grace Hopper": "person",
    "Acme": "organization",
    "Globex": "organization",
    "Paris": "location",
    "Berlin": "location",
}
RELATIONS = [
    ("Ada Lovelace", "Acme", "works_for"),
    ("Grace Hopper", "Globex", "works_for"),
    ("Acme", "Paris", "located_in"),
    ("Globex", "Berlin", "located_in"),
    ("Acme", "Globex", "related_to"),
]
HUBS = "ws=lab&hubs=20&bench=1"


@pytest.fixture
def editor(make_member, sign_in):
    member = make_member("ada", workspace="lab", role=Role.EDITOR)
    built = make_graph(member.workspace, entities=ENTITIES, relations=RELATIONS)
    sign_in(member)
    return member, built


def open_view(page: Page, saved_layout: str) -> None:
    page.goto(f"/explore/?{HUBS}")
    expect(page.locator("#explorer")).to_have_attribute("data-ready", "true")
    expect(page.locator("#graph-canvas")).to_have_attribute("data-layout", "settled")
    expect(page.locator("#explorer")).to_have_attribute("data-saved-layout", saved_layout)


def drawn(page: Page) -> dict[int, tuple[float, float]]:
    rows = page.evaluate("() => window.graphloomLayouts.positions()")
    return {row["id"]: (row["x"], row["y"]) for row in rows}


def stored(member, page: Page) -> dict[int, tuple[float, float]]:
    key = page.evaluate("() => window.graphloomLayouts.key()")
    url = f"/api/v1/workspaces/lab/layouts?view={quote(key, safe='')}"
    layout = member.client().get(url).json()
    assert layout["count"] == len(layout["nodes"]) > 0
    return dict(zip(layout["nodes"], zip(layout["x"], layout["y"], strict=True), strict=True))


def assert_at(page_positions, saved_positions) -> None:
    for node, (x, y) in saved_positions.items():
        px, py = page_positions[node]
        assert abs(px - x) <= 0.01 and abs(py - y) <= 0.01, (node, (px, py), (x, y))


def test_a_settled_layout_comes_back_exactly_and_stays_still(page, editor):
    member, built = editor
    open_view(page, "saved")
    saved = stored(member, page)
    assert set(saved) == {entity.pk for entity in built.entities.values()}
    assert_at(drawn(page), saved)

    page.goto("about:blank")
    open_view(page, "restored")
    restored = drawn(page)
    assert set(restored) == set(saved)
    assert_at(restored, saved)
    # Nothing simulates a restored layout: a second later every node is where it was.
    page.wait_for_timeout(1000)
    assert drawn(page) == restored
    expect(page.locator("#graph-canvas")).to_have_attribute("data-layout", "settled")
    assert stored(member, page) == saved  # unchanged, so not saved again


def test_re_run_layout_simulates_again_and_saves_the_new_layout(page, editor):
    member, _ = editor
    open_view(page, "saved")
    page.goto("about:blank")
    open_view(page, "restored")
    before = drawn(page)

    page.get_by_role("button", name="Re-run layout").click()
    expect(page.locator("#explorer")).to_have_attribute("data-saved-layout", "saved")

    after = drawn(page)
    assert after != before
    assert_at(after, stored(member, page))


def test_an_entity_new_since_the_save_is_placed_next_to_its_neighbour(page, editor):
    member, built = editor
    open_view(page, "saved")
    saved = stored(member, page)
    acme = built.entities["Acme"]
    hedy = make_graph(member.workspace, entities={"Hedy Lamarr": "person"}, title="More notes")
    Relation.objects.create(
        workspace=member.workspace,
        source=hedy.entities["Hedy Lamarr"],
        target=acme,
        type=RelationType.objects.get(workspace=member.workspace, name="works_for"),
        description="Hedy Lamarr works_for Acme.",
        keywords=["works_for"],
        weight=0.8,
        evidence_count=1,
    )

    page.goto("about:blank")
    open_view(page, "saved")  # restored, then saved again with the new entity in it

    positions = drawn(page)
    assert_at(positions, saved)
    new = positions[hedy.entities["Hedy Lamarr"].pk]
    assert 0 < math.dist(new, saved[acme.pk]) <= 13
    resaved = stored(member, page)
    assert set(resaved) == set(saved) | {hedy.entities["Hedy Lamarr"].pk}
    assert_at(positions, resaved)


def test_a_viewer_sees_the_saved_layout_but_does_not_save(page, editor, make_member, sign_in):
    member, _ = editor
    open_view(page, "saved")
    saved = stored(member, page)
    viewer = make_member("vic", workspace="lab", role=Role.VIEWER)
    sign_in(viewer)

    open_view(page, "restored")
    assert_at(drawn(page), saved)
    expect(page.get_by_label("Remember layout")).to_have_count(0)


def test_unticking_remember_layout_stops_saving_in_this_browser(page, editor):
    member, _ = editor
    open_view(page, "saved")
    saved = stored(member, page)
    page.get_by_label("Remember layout").uncheck()
    before = drawn(page)

    page.get_by_role("button", name="Re-run layout").click()
    expect(page.locator("#graph-canvas")).to_have_attribute("data-layout", "settled")
    page.wait_for_timeout(1500)  # twice the page's save delay
    assert drawn(page) != before
    assert stored(member, page) == saved

    page.goto("about:blank")
    open_view(page, "restored")
    expect(page.get_by_label("Remember layout")).not_to_be_checked()
