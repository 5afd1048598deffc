"""The community map in a real browser (issue 19): a workspace above EXPLORER_MAP_ABOVE opens
on its map of communities (while they are being computed it says so and asks again); a
click on a community drills into its sub-communities or into its entities (with its
neighbouring communities as ghost nodes that are no entities: not listed, not exported); an
entity opens its panel; the breadcrumb, the browser's Back and a reload move between and
restore the levels; and community labels made of hostile entity names stay text.

The graph is a ring of 16 cliques of four entities: Louvain (seeded) joins neighbouring
cliques into communities of eight, which COMMUNITY_SPLIT_ABOVE=5 splits back into their two
cliques, and leaves a few cliques alone (communities without sub-communities). Which
community is which is read from the stored map, not assumed.
"""

from __future__ import annotations

import json
import re
from itertools import combinations
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, expect

from knowledge.actions.communities import do_compute_communities
from knowledge.models import Community, Entity
from tests.browser.conftest import screenshot
from tests.knowledge.graph_data import Built, make_graph
from workspaces.models import Role

CLIQUES = 16
SIZE = 4
IMG = "<img src=x onerror=window.__pwned=1>"
SCRIPT = "<script>window.__pwned=2</script>"


def member_name(clique: int, member: int) -> str:
    hostile = {(0, 0): IMG, (0, 1): SCRIPT}
    return hostile.get((clique, member), f"Clique {clique} member {member}")


@pytest.fixture
def ring(make_member, sign_in, settings) -> Built:
    settings.EXPLORER_MAP_ABOVE = 20
    settings.COMMUNITY_SPLIT_ABOVE = 5
    member = make_member("ada", workspace="lab", role=Role.VIEWER)
    entities = {member_name(c, m): "concept" for c in range(CLIQUES) for m in range(SIZE)}
    relations = [
        (member_name(c, a), member_name(c, b), "related_to")
        for c in range(CLIQUES)
        for a, b in combinations(range(SIZE), 2)
    ]
    relations += [
        (member_name(c, 0), member_name((c + 1) % CLIQUES, 1), "related_to") for c in range(CLIQUES)
    ]
    built = make_graph(member.workspace, entities=entities, relations=relations)
    sign_in(member)
    return built


def key_of(community: Community) -> str:
    if community.subcommunity is None:
        return str(community.community)
    return f"{community.community}.{community.subcommunity}"


def top_level(built: Built):
    return Community.objects.filter(workspace=built.source.workspace, subcommunity__isnull=True)


def members(built: Built, key: str) -> dict[int, str]:
    """The active entities of community `key` ("3" or "3.2"): id -> name."""
    parts = [int(p) for p in key.split(".")]
    found = Entity.objects.filter(workspace=built.source.workspace, community=parts[0])
    if len(parts) > 1:
        found = found.filter(subcommunity=parts[1])
    return dict(found.values_list("pk", "name"))


def query_of(page: Page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def community_button(page: Page, key: str):
    return page.locator(f'#map-list-items button[data-key="{key}"]')


def expect_level(page: Page, level: str, keys: list[str]) -> None:
    """The map shows `level` ("top" or a key) with exactly these communities listed."""
    canvas = page.locator("#map-canvas")
    expect(canvas).to_be_visible()
    expect(canvas).to_have_attribute("data-level", level)
    expect(canvas).to_have_attribute("data-state", re.compile(r"^(drawn|stale)$"))
    expect(page.locator("#map-list-items button")).to_have_count(len(keys))
    for key in keys:
        expect(community_button(page, key)).to_be_visible()


def click_on_canvas(page: Page, key: str) -> None:
    """A click on the community's circle (its centre, which the list's button carries)."""
    button = community_button(page, key)
    expect(button).to_have_attribute("data-x", re.compile(r"^-?\d+$"))
    box = page.locator("#map-canvas").bounding_box()
    assert box is not None
    page.mouse.click(
        box["x"] + float(button.get_attribute("data-x") or 0),
        box["y"] + float(button.get_attribute("data-y") or 0),
    )


def expect_entities(page: Page, expected: dict[int, str]) -> None:
    """The graph shows exactly these entities (the node list leaves ghosts out)."""
    expect(page.locator("#map-canvas")).to_be_hidden()
    expect(page.locator("#graph-canvas")).to_have_attribute("data-layout", "settled")
    details = page.locator("#node-list")
    if details.get_attribute("open") is None:
        page.locator("#node-list summary").click()
    expect(page.locator("#node-total")).to_have_text(str(len(expected)))
    # The list holds the nodes in view; the layout may settle with one outside it.
    page.locator('button[data-zoom="fit"]').click()
    expect(page.locator("#node-count")).to_have_text(str(len(expected)))
    for entity_id, name in expected.items():
        expect(page.locator(f'#node-list-items button[data-id="{entity_id}"]')).to_contain_text(
            name
        )


def crumbs(page: Page):
    return page.locator("#map-breadcrumb li")


def expect_trail(page: Page, labels: list[str]) -> None:
    """The breadcrumb names these levels, top down (long names are cut short on screen and
    given whole in the crumb's title)."""
    expect(crumbs(page)).to_have_count(len(labels))
    for i, label in enumerate(labels):
        expect(crumbs(page).nth(i).locator("> *")).to_have_attribute("title", label)


def test_the_map_drills_down_to_entities_and_the_breadcrumb_back_and_reload_follow(page, ring):
    workspace = ring.source.workspace
    page.goto("/explore/?ws=lab")
    # Nothing computed yet: the map says so (a computation was queued) and asks again.
    expect(page.locator("#map-canvas")).to_have_attribute("data-state", "computing")
    expect(page.locator("#map-status")).to_contain_text("Computing")
    assert query_of(page) == {"ws": "lab", "view": "map"}

    do_compute_communities(workspace=workspace)
    top = list(top_level(ring))
    parent = next(c for c in top if c.children)
    leaf = next(c for c in top if not c.children)
    expect_level(page, "top", [key_of(c) for c in top])
    expect(page.locator("#map-status")).to_contain_text(f"{len(top)} communities")
    expect_trail(page, ["All communities"])
    screenshot(page, "community-map")

    # A community without sub-communities, clicked on the canvas: its entities.
    click_on_canvas(page, key_of(leaf))
    expect(page).to_have_url(re.compile(rf"[?&]c={leaf.community}(&|$)"))
    expect_entities(page, members(ring, key_of(leaf)))
    expect_trail(page, ["All communities", leaf.label])
    page.go_back()
    expect_level(page, "top", [key_of(c) for c in top])

    # One with sub-communities, from the accessible list: its sub-map, then one of them.
    community_button(page, key_of(parent)).click()
    assert query_of(page) == {"ws": "lab", "view": "map", "c": key_of(parent)}
    subs = list(
        Community.objects.filter(workspace=workspace, community=parent.community).exclude(
            subcommunity=None
        )
    )
    assert len(subs) == parent.children > 1
    expect_level(page, key_of(parent), [key_of(s) for s in subs])
    expect_trail(page, ["All communities", parent.label])
    sub = subs[0]
    community_button(page, key_of(sub)).click()
    expected = members(ring, key_of(sub))
    expect_entities(page, expected)
    expect_trail(page, ["All communities", parent.label, sub.label])
    assert query_of(page)["c"] == key_of(sub)
    screenshot(page, "community-drill")

    # The neighbouring communities are drawn as ghost nodes, but are no entities: the
    # status counts them, the node list and the exports leave them out.
    drill = page.request.get(f"/api/v1/workspaces/lab/communities/{key_of(sub)}/graph?limit=5000")
    assert drill.ok
    payload = drill.json()
    assert payload["neighbours"]
    shown = len(payload["nodes"]) + len(payload["neighbours"])
    expect(page.locator("#graph-status")).to_contain_text(f"{shown} nodes")
    page.locator("#export-block summary").click()
    with page.expect_download() as download:
        page.locator('#export-block [data-export="json"]').click()
    exported = json.loads(download.value.path().read_text())
    assert {node["id"] for node in exported["nodes"]} == set(expected)
    assert all(edge["id"] > 0 for edge in exported["edges"])
    # The ghosts' way in without a pointer: the neighbouring communities listed.
    expect(page.locator("#map-list-title")).to_have_text("Neighbouring communities")
    expect(page.locator("#map-list-items button")).to_have_count(len(payload["neighbours"]))
    for neighbour in payload["neighbours"]:
        expect(community_button(page, neighbour["key"])).to_contain_text(neighbour["label"])

    # An entity opens its panel.
    first_id, first_name = next(iter(expected.items()))
    page.locator(f'#node-list-items button[data-id="{first_id}"]').click()
    expect(page.locator("#panel-title")).to_have_text(first_name)

    # A reload lands on the same level, the breadcrumb named again.
    page.reload()
    expect_entities(page, expected)
    expect_trail(page, ["All communities", parent.label, sub.label])

    # The breadcrumb goes back up, level by level; Back returns a level.
    page.locator(f'#map-breadcrumb button[data-key="{key_of(parent)}"]').click()
    expect_level(page, key_of(parent), [key_of(s) for s in subs])
    crumbs(page).get_by_role("button", name="All communities").click()
    expect_level(page, "top", [key_of(c) for c in top])
    assert query_of(page) == {"ws": "lab", "view": "map"}
    page.go_back()
    expect_level(page, key_of(parent), [key_of(s) for s in subs])

    # The classic view is a link away, and comes back with the hubs.
    page.get_by_role("link", name="Classic view").click()
    expect(page.locator("#graph-canvas")).to_have_attribute("data-layout", "settled")
    expect(page.locator("#map-canvas")).to_be_hidden()
    expect(page.get_by_role("link", name="Community map")).to_be_visible()


def assert_inert(page: Page) -> None:
    assert page.evaluate("window.__pwned") is None
    assert page.locator("body img[src='x'], body script:not([src])").count() == 0


def test_hostile_community_labels_are_shown_as_text_and_run_nothing(page, ring):
    do_compute_communities(workspace=ring.source.workspace)
    hostile = Entity.objects.get(workspace=ring.source.workspace, name=IMG)
    key = str(hostile.community)
    page.goto("/explore/?ws=lab")
    expect(page.locator("#map-canvas")).to_have_attribute("data-state", "drawn")
    button = community_button(page, key)
    expect(button).to_contain_text(IMG)
    expect(button).to_contain_text(SCRIPT)
    assert_inert(page)

    # The tooltip over its circle.
    x = float(button.get_attribute("data-x") or 0)
    y = float(button.get_attribute("data-y") or 0)
    box = page.locator("#map-canvas").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + x, box["y"] + y)
    expect(page.locator("#graph-tooltip")).to_contain_text(IMG)
    assert_inert(page)

    # Drilled into: the breadcrumb names it, down to its entities' panel. (A sub-community
    # is named after the same entity as its parent, so the breadcrumb alone cannot tell the
    # levels apart: the URL and the members listed do.)
    button.click()
    expect(page).to_have_url(re.compile(rf"[?&]c={re.escape(key)}(&|$)"))
    expect(page.locator("#map-breadcrumb [aria-current]")).to_contain_text(IMG)
    drilled = key
    if hostile.subcommunity is not None:
        drilled = f"{key}.{hostile.subcommunity}"
        expect(community_button(page, drilled)).to_contain_text(IMG)
        community_button(page, drilled).click()
        expect(page).to_have_url(re.compile(rf"[?&]c={re.escape(drilled)}(&|$)"))
        expect(page.locator("#map-breadcrumb [aria-current]")).to_contain_text(IMG)
    expect_entities(page, members(ring, drilled))
    page.locator(f'#node-list-items button[data-id="{hostile.pk}"]').click()
    expect(page.locator("#panel-title")).to_have_text(IMG)
    assert_inert(page)

    # A neighbouring community (a ghost on the canvas, a button in the list) drills on.
    page.locator("#map-list summary").click()
    neighbour = page.locator("#map-list-items button").first
    key = neighbour.get_attribute("data-key")
    label = neighbour.locator(".node-name").text_content()
    neighbour.click()
    expect(page).to_have_url(re.compile(rf"[?&]c={re.escape(key or '')}(&|$)"))
    expect(page.locator("#map-breadcrumb [aria-current]")).to_have_attribute("title", label or "")
    assert_inert(page)
