"""The community map as API endpoints (`GET …/communities/map[?parent=N]` and
`GET …/communities/{key}/graph`): levels, others, links, a community's entities with stubs
to its neighbours, errors, workspace scoping, staleness and the computation queued once."""

from __future__ import annotations

from itertools import combinations

import pytest
from django_tasks_db.models import DBTaskResult

from knowledge.actions.communities import do_compute_communities
from knowledge.models import CommunitySummary
from tests.knowledge.community_data import Planted, nested, two_cliques
from tests.support import signed_in
from workspaces.models import Role

pytestmark = pytest.mark.django_db

MAP = "/api/v1/workspaces/lab/communities/map"
GRAPH = "/api/v1/workspaces/lab/communities/{key}/graph"
TASK = "knowledge.tasks.compute_communities"


@pytest.fixture
def viewer(make_member):
    return make_member("ada", workspace="lab", role=Role.VIEWER)


@pytest.fixture
def cliques(viewer):
    """Two cliques of six joined by one edge, and a loner; communities computed."""
    graph = two_cliques(viewer.workspace)
    do_compute_communities(workspace=viewer.workspace)
    return signed_in(viewer), graph


@pytest.fixture
def groups(viewer, settings):
    """Three groups of four cliques, each group split into four sub-communities."""
    settings.COMMUNITY_SPLIT_ABOVE = 10
    graph = nested(viewer.workspace)
    do_compute_communities(workspace=viewer.workspace)
    return signed_in(viewer), graph


def queued() -> int:
    return DBTaskResult.objects.filter(task_path=TASK).count()


# --- the map -------------------------------------------------------------------------------


def test_a_map_never_computed_is_empty_and_queues_its_computation_once(viewer):
    two_cliques(viewer.workspace)
    client = signed_in(viewer)

    first = client.get(MAP)
    second = client.get(MAP).json()

    assert first.status_code == 200
    data = first.json()
    assert data["communities"] == [] and data["links"] == []
    assert data["computing"] is True and data["stale"] is False
    assert data["computed_at"] is None
    assert second["computing"] is True
    assert queued() == 1


def test_the_top_level_lists_communities_largest_first_with_the_links_among_them(cliques):
    client, graph = cliques

    data = client.get(MAP).json()

    assert data["parent"] is None
    assert data["entities"] == 13
    assert [(c["key"], c["size"], c["has_children"]) for c in data["communities"]] == [
        ("0", 6, False),
        ("1", 6, False),
    ]
    first = data["communities"][0]
    assert first["label"] == "a5 · a0 · a1"
    assert first["title"] is None
    assert first["top"][0] == {"id": graph.ids["a5"], "name": "a5", "type": "person"}
    assert len(first["top"]) == 5
    assert data["links"] == [{"source": "0", "target": "1", "count": 1, "weight": 1.0}]
    assert data["links_total"] == 1
    # the loner: a community of one without relations
    assert data["others"] == {"communities": 1, "entities": 1}
    assert data["stale"] is False and data["computing"] is False
    assert data["computed_at"] is not None
    assert queued() == 0


def test_communities_beyond_the_map_max_are_counted_as_others(cliques, settings):
    client, _ = cliques
    settings.EXPLORER_MAP_MAX = 1

    data = client.get(MAP).json()

    assert [c["key"] for c in data["communities"]] == ["0"]
    # no link to a community not listed
    assert data["links"] == [] and data["links_total"] == 0
    assert data["others"] == {"communities": 2, "entities": 7}


def test_a_level_lists_the_strongest_links_and_counts_them_all(viewer):
    graph = Planted(viewer.workspace)
    cliques = [[f"c{c}m{m}" for m in range(6)] for c in range(20)]
    graph.entities(*(name for clique in cliques for name in clique))
    for clique in cliques:
        graph.relate(*combinations(clique, 2), weight=3.0)
    # every two cliques joined by a weightless relation; c0 and c1 by two
    graph.relate(*((one[0], other[1]) for one, other in combinations(cliques, 2)), weight=0.0)
    graph.relate((cliques[0][2], cliques[1][3]), weight=0.0)
    do_compute_communities(workspace=viewer.workspace)

    data = signed_in(viewer).get(MAP).json()

    assert len(data["communities"]) == 20
    assert len(data["links"]) == 8 * 20
    assert data["links_total"] == 20 * 19 // 2
    assert data["links"][0]["count"] == 2


def test_a_community_is_titled_by_its_summary_when_one_exists(cliques):
    client, graph = cliques
    CommunitySummary.objects.create(
        workspace=graph.workspace, community=1, title="The b's", summary="…", member_hash="x"
    )

    data = client.get(MAP).json()

    assert [c["title"] for c in data["communities"]] == [None, "The b's"]


def test_split_communities_have_children_listed_under_their_parent(groups):
    client, _ = groups

    top = client.get(MAP).json()
    sub = client.get(f"{MAP}?parent=1").json()

    assert [(c["key"], c["size"], c["has_children"]) for c in top["communities"]] == [
        ("0", 20, True),
        ("1", 20, True),
        ("2", 20, True),
    ]
    assert len(top["links"]) == 2
    assert sub["parent"] == "1"
    assert sub["entities"] == 20
    assert [(c["key"], c["size"]) for c in sub["communities"]] == [
        ("1.0", 5),
        ("1.1", 5),
        ("1.2", 5),
        ("1.3", 5),
    ]
    assert all(c["has_children"] is False for c in sub["communities"])
    assert len(sub["links"]) == 6
    assert {link["count"] for link in sub["links"]} == {3}
    assert all(link["source"].startswith("1.") for link in sub["links"])
    assert sub["others"] == {"communities": 0, "entities": 0}


def test_a_community_without_children_has_an_empty_sub_level(cliques):
    client, _ = cliques

    data = client.get(f"{MAP}?parent=0").json()

    assert data["communities"] == [] and data["entities"] == 0


def test_a_map_parent_unknown_is_404_and_malformed_is_400(cliques):
    client, _ = cliques

    assert client.get(f"{MAP}?parent=7").status_code == 404
    assert client.get(f"{MAP}?parent=x").status_code == 400
    assert client.get(f"{MAP}?parent=0.1").status_code == 400
    assert client.get(f"{MAP}?parent=-1").json()["error"]["code"] == "bad_key"


def test_a_stale_map_is_served_and_its_recomputation_queued_once(cliques):
    client, graph = cliques
    graph.relate(("loner", "a2"), ("loner", "a3"))

    data = client.get(MAP).json()
    again = client.get(MAP).json()

    assert data["stale"] is True and data["computing"] is True
    # still the stored map: the loner joins community 0 only once it is recomputed
    assert [c["size"] for c in data["communities"]] == [6, 6]
    assert again["stale"] is True
    assert queued() == 1


# --- one community's entities --------------------------------------------------------------


def test_a_community_graph_has_its_members_and_stubs_to_its_neighbours(cliques):
    client, graph = cliques

    data = client.get(GRAPH.format(key="0")).json()

    assert data["community"] == "0"
    assert {n["name"] for n in data["nodes"]} == {f"a{i}" for i in range(6)}
    assert len(data["edges"]) == 15
    assert data["count"] == 6 and data["truncated"] is False
    assert data["stubs"] == [{"node": graph.ids["a5"], "community": "1", "count": 1}]
    assert data["neighbours"] == [{"key": "1", "label": "b0 · b1 · b2", "size": 6}]


def test_a_community_graph_keeps_its_best_connected_members_up_to_the_limit(cliques):
    client, graph = cliques

    data = client.get(GRAPH.format(key="1") + "?limit=2").json()

    # b0 carries the bridge (degree 6); then degree 5, lowest id first
    assert {n["name"] for n in data["nodes"]} == {"b0", "b1"}
    assert data["count"] == 6 and data["truncated"] is True
    assert data["stubs"] == [{"node": graph.ids["b0"], "community": "0", "count": 1}]


def test_a_sub_community_graph_has_stubs_to_its_siblings_and_other_communities(groups):
    client, graph = groups
    member = graph.entity("g1s0e1")
    key = f"{member.community}.{member.subcommunity}"

    data = client.get(GRAPH.format(key=key)).json()

    assert {n["name"] for n in data["nodes"]} == {f"g1s0e{e}" for e in range(5)}
    siblings = {s["community"] for s in data["stubs"] if s["community"].startswith("1.")}
    assert len(siblings) == 3 and key not in siblings
    # g1s0e1 - g0s0e0 and g1s0e0 - g2s0e1 leave the group
    outside = {(s["node"], s["community"]) for s in data["stubs"] if "." not in s["community"]}
    assert outside == {(graph.ids["g1s0e1"], "0"), (graph.ids["g1s0e0"], "2")}
    assert {n["key"] for n in data["neighbours"]} == siblings | {"0", "2"}
    # three edges to each sibling, one to each other group
    assert [n["size"] for n in data["neighbours"]][:3] == [5, 5, 5]


def test_a_community_graph_in_columns_keeps_the_stubs(cliques):
    client, _ = cliques

    data = client.get(GRAPH.format(key="0") + "?format=columns").json()

    assert data["format"] == "columns"
    assert len(data["nodes"]["id"]) == 6
    assert data["community"] == "0" and len(data["stubs"]) == 1


def test_a_community_key_unknown_is_404_and_malformed_is_400(cliques):
    client, _ = cliques

    assert client.get(GRAPH.format(key="9")).status_code == 404
    assert client.get(GRAPH.format(key="0.0")).status_code == 404
    for bad in ("x", "1.2.3", "1.", "%20"):
        assert client.get(GRAPH.format(key=bad)).status_code == 400, bad


# --- workspace scoping ---------------------------------------------------------------------


def test_another_workspaces_communities_never_leak(cliques, make_member, settings):
    client, graph = cliques
    settings.COMMUNITY_SPLIT_ABOVE = 10
    stranger = make_member("eve", workspace="other", role=Role.ADMIN)
    theirs = nested(stranger.workspace)
    do_compute_communities(workspace=stranger.workspace)

    mine = client.get(MAP).json()
    drilled = client.get(GRAPH.format(key="1")).json()

    assert [c["size"] for c in mine["communities"]] == [6, 6]
    assert {n["id"] for n in drilled["nodes"]} <= set(graph.ids.values())
    # "0" is split there, not here; "0.1" is theirs only
    assert client.get(f"{MAP}?parent=0").json()["communities"] == []
    assert client.get(GRAPH.format(key="0.1")).status_code == 404
    # and the stranger's own map is theirs, unreadable by our viewer
    other = signed_in(stranger).get("/api/v1/workspaces/other/communities/map").json()
    assert [c["size"] for c in other["communities"]] == [20, 20, 20]
    assert all(m["id"] in theirs.ids.values() for c in other["communities"] for m in c["top"])
    assert client.get("/api/v1/workspaces/other/communities/map").status_code == 404
    assert client.get("/api/v1/workspaces/other/communities/0/graph").status_code == 404
