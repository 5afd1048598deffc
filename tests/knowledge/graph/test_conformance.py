"""What every graph backend answers, on the same shapes (see conftest.py): neighbourhoods,
shortest paths, hubs, subgraphs and statistics, their edge cases, and the two promises that
hold whatever ids a caller passes — merged or deleted rows never appear, and nothing of
another workspace does.

Each test runs once per backend (`graph_backend`); a backend without a server is skipped
with the reason.
"""

from __future__ import annotations

import pytest

from knowledge.graph.base import GraphBackend, GraphResult, GraphStats, PathResult
from tests.knowledge.graph.conftest import BUSY_SPOKES, SPOKES, Shapes, spoke

# --- helpers ---------------------------------------------------------------------------------


def names(shapes: Shapes, result: GraphResult) -> list[str]:
    return [shapes.name_of(n.id) for n in result.nodes]


def depths(shapes: Shapes, result: GraphResult) -> dict[str, int | None]:
    return {shapes.name_of(n.id): n.depth for n in result.nodes}


def edge_ids(result: GraphResult | PathResult) -> set[int]:
    return {e.id for e in result.edges}


def relations(shapes: Shapes, *labels: str) -> set[int]:
    return {shapes.home.relations[label] for label in labels}


def assert_well_formed(result: GraphResult) -> None:
    """Nodes are unique, every edge has both ends among them, edges are unique."""
    node_ids = [n.id for n in result.nodes]
    assert len(node_ids) == len(set(node_ids))
    assert all(e.source in node_ids and e.target in node_ids for e in result.edges)
    assert len(edge_ids(result)) == len(result.edges)


def assert_path(shapes: Shapes, path: PathResult | None, expected: list[str]) -> PathResult:
    """The path visits `expected` in order, positions as depths, one connecting edge per hop."""
    assert path is not None
    assert [shapes.name_of(n.id) for n in path.nodes] == expected
    assert [n.depth for n in path.nodes] == list(range(len(expected)))
    assert path.length == len(expected) - 1 == len(path.edges)
    for (a, b), edge in zip(zip(path.nodes, path.nodes[1:], strict=False), path.edges, strict=True):
        assert {edge.source, edge.target} == {a.id, b.id}
    return path


# --- neighbourhood -------------------------------------------------------------------------


@pytest.mark.slow(reason="the first graph test of its worker (functions created)")
def test_one_hop_returns_the_seed_at_depth_0_and_its_neighbours_at_depth_1(
    graph_backend: GraphBackend, shapes: Shapes
):
    result = graph_backend.neighborhood(workspace_id=shapes.ws, seeds=[shapes["c2"]], hops=1)

    assert depths(shapes, result) == {"c2": 0, "c1": 1, "c3": 1}
    assert names(shapes, result)[0] == "c2"
    assert edge_ids(result) == relations(shapes, "c1-c2", "c2-c3")
    assert not result.truncated
    assert_well_formed(result)


@pytest.mark.parametrize(
    ("hops", "expected"),
    [
        (1, {"c0": 0, "c1": 1}),
        (2, {"c0": 0, "c1": 1, "c2": 2}),
        (3, {"c0": 0, "c1": 1, "c2": 2, "c3": 3}),
    ],
)
def test_hops_bound_the_walk_along_a_chain(
    graph_backend: GraphBackend, shapes: Shapes, hops: int, expected: dict[str, int]
):
    result = graph_backend.neighborhood(workspace_id=shapes.ws, seeds=[shapes["c0"]], hops=hops)

    assert depths(shapes, result) == expected
    assert len(result.edges) == hops
    assert not result.truncated


@pytest.mark.parametrize("hops", [0, 4, -1])
def test_hops_outside_one_to_three_are_refused(
    graph_backend: GraphBackend, shapes: Shapes, hops: int
):
    with pytest.raises(ValueError, match="hops"):
        graph_backend.neighborhood(workspace_id=shapes.ws, seeds=[shapes["c0"]], hops=hops)


def test_an_unknown_direction_is_refused(graph_backend: GraphBackend, shapes: Shapes):
    with pytest.raises(ValueError, match="direction"):
        graph_backend.neighborhood(
            workspace_id=shapes.ws,
            seeds=[shapes["c0"]],
            direction="sideways",  # type: ignore[arg-type]
        )


@pytest.mark.parametrize(
    ("direction", "expected"),
    [
        ("out", {"c2": 0, "c3": 1, "c4": 2}),
        ("in", {"c2": 0, "c1": 1, "c0": 2}),
        ("both", {"c2": 0, "c1": 1, "c3": 1, "c0": 2, "c4": 2}),
    ],
)
def test_direction_follows_edges_forwards_backwards_or_both(
    graph_backend: GraphBackend, shapes: Shapes, direction, expected
):
    result = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes["c2"]], hops=2, direction=direction
    )

    assert depths(shapes, result) == expected
    assert_well_formed(result)


def test_every_node_is_at_its_shortest_depth_and_a_cycle_ends(
    graph_backend: GraphBackend, shapes: Shapes
):
    both = graph_backend.neighborhood(workspace_id=shapes.ws, seeds=[shapes["y0"]], hops=3)
    out = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes["y0"]], hops=3, direction="out"
    )

    assert depths(shapes, both) == {"y0": 0, "y1": 1, "y2": 1}
    assert depths(shapes, out) == {"y0": 0, "y1": 1, "y2": 2}
    assert edge_ids(both) == edge_ids(out) == relations(shapes, "y0-y1", "y1-y2", "y2-y0")


def test_a_self_loop_is_an_edge_once_and_a_degree_of_one(
    graph_backend: GraphBackend, shapes: Shapes
):
    result = graph_backend.neighborhood(workspace_id=shapes.ws, seeds=[shapes["s0"]], hops=2)

    assert depths(shapes, result) == {"s0": 0, "s1": 1}
    assert edge_ids(result) == relations(shapes, "s0-s0", "s0-s1")
    assert {shapes.name_of(n.id): n.degree for n in result.nodes} == {"s0": 2, "s1": 1}


def test_parallel_edges_of_different_types_are_all_returned(
    graph_backend: GraphBackend, shapes: Shapes
):
    result = graph_backend.neighborhood(workspace_id=shapes.ws, seeds=[shapes["m0"]], hops=1)

    assert depths(shapes, result) == {"m0": 0, "m1": 1}
    assert edge_ids(result) == relations(
        shapes, "m0-m1 works_for", "m0-m1 owns", "m1-m0 related_to"
    )
    assert {e.type for e in result.edges} == {"works_for", "owns", "related_to"}


def test_relation_types_limit_both_the_walk_and_the_edges(
    graph_backend: GraphBackend, shapes: Shapes
):
    owns = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes["m0"]], relation_types=["owns"]
    )
    elsewhere = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes["c2"]], hops=2, relation_types=["owns", "uses"]
    )
    nothing = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes["m0"]], relation_types=[]
    )

    assert depths(shapes, owns) == {"m0": 0, "m1": 1}
    assert edge_ids(owns) == relations(shapes, "m0-m1 owns")
    assert [e.type for e in owns.edges] == ["owns"]
    assert depths(shapes, elsewhere) == {"c2": 0}
    assert elsewhere.edges == []
    assert depths(shapes, nothing) == {"m0": 0}


def test_entity_types_filter_what_is_returned_but_the_walk_goes_through_other_types(
    graph_backend: GraphBackend, shapes: Shapes
):
    result = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes["c1"]], hops=3, entity_types=["person"]
    )

    # c1 is an organization but, as the seed, stays; c3 (organization) is walked through.
    assert depths(shapes, result) == {"c1": 0, "c0": 1, "c2": 1, "c4": 3}
    assert edge_ids(result) == relations(shapes, "c0-c1", "c1-c2")
    assert_well_formed(result)


def test_nodes_carry_their_name_type_degree_mentions_and_community(
    graph_backend: GraphBackend, shapes: Shapes
):
    result = graph_backend.neighborhood(workspace_id=shapes.ws, seeds=[shapes["c3"]], hops=1)
    by_name = {shapes.name_of(n.id): n for n in result.nodes}

    c4 = by_name["c4"]
    assert (c4.name, c4.type, c4.degree, c4.mention_count, c4.community) == (
        "c4",
        "person",
        1,
        7,
        1,
    )
    # The deleted shortcut, the merged duplicate and the merged entity's edge do not count.
    assert by_name["c3"].degree == 2
    assert by_name["c2"].degree == 2


def test_a_limit_keeps_the_nearest_then_the_highest_degree_then_the_lowest_id(
    graph_backend: GraphBackend, shapes: Shapes
):
    result = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes["h"]], hops=2, limit=10
    )

    busy = [spoke(i) for i in range(BUSY_SPOKES)]
    quiet = [spoke(i) for i in range(BUSY_SPOKES, 9)]
    assert names(shapes, result) == ["h", *busy, *quiet]
    assert [n.degree for n in result.nodes] == [SPOKES] + [2] * BUSY_SPOKES + [1] * 4
    assert result.truncated
    assert_well_formed(result)
    assert len(result.edges) == 9


def test_a_limit_cutting_the_second_level_keeps_the_whole_first(
    graph_backend: GraphBackend, shapes: Shapes
):
    everything = 1 + SPOKES + BUSY_SPOKES
    cut = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes["h"]], hops=2, limit=everything - 3
    )

    assert len(cut.nodes) == everything - 3
    assert {n.depth for n in cut.nodes[: 1 + SPOKES]} == {0, 1}
    assert names(shapes, cut)[1 + SPOKES :] == ["q0", "q1"]
    assert cut.truncated


def test_truncated_stays_false_when_everything_reachable_fits(
    graph_backend: GraphBackend, shapes: Shapes
):
    everything = 1 + SPOKES + BUSY_SPOKES
    exact = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes["h"]], hops=3, limit=everything
    )
    roomy = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes["h"]], hops=3, limit=everything + 100
    )

    assert len(exact.nodes) == len(roomy.nodes) == everything
    assert not exact.truncated
    assert not roomy.truncated
    assert len(exact.edges) == SPOKES + BUSY_SPOKES


def test_reaching_the_limit_exactly_is_truncated_only_if_more_lies_within_the_hops(
    graph_backend: GraphBackend, shapes: Shapes
):
    within = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes["c0"]], hops=3, limit=3
    )
    beyond_the_hops = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes["c0"]], hops=2, limit=3
    )

    assert names(shapes, within) == ["c0", "c1", "c2"]
    assert within.truncated
    assert names(shapes, beyond_the_hops) == ["c0", "c1", "c2"]
    assert not beyond_the_hops.truncated


def test_more_seeds_than_the_limit_keep_the_best_seeds(graph_backend: GraphBackend, shapes):
    seeds = [shapes["c0"], shapes["c2"], shapes["h"], shapes["i0"]]
    result = graph_backend.neighborhood(workspace_id=shapes.ws, seeds=seeds, limit=2)

    assert names(shapes, result) == ["h", "c2"]
    assert {n.depth for n in result.nodes} == {0}
    assert result.truncated


def test_several_seeds_each_start_at_depth_0(graph_backend: GraphBackend, shapes: Shapes):
    result = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes["c0"], shapes["y0"], shapes["i0"]], hops=1
    )

    assert depths(shapes, result) == {"c0": 0, "y0": 0, "i0": 0, "c1": 1, "y1": 1, "y2": 1}
    # nearest first, then higher degree, then id
    assert names(shapes, result)[:3] == ["y0", "c0", "i0"]


def test_merged_and_deleted_rows_never_appear_in_a_neighbourhood(
    graph_backend: GraphBackend, shapes: Shapes
):
    around = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes["c0"], shapes["c4"]], hops=3, limit=1000
    )
    gone = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes["deleted"], shapes["merged"]], hops=3
    )

    assert set(names(shapes, around)) == {"c0", "c1", "c2", "c3", "c4"}
    assert depths(shapes, around)["c4"] == 0
    inactive = relations(shapes, "c2-deleted", "merged-c4", "c0-c4 deleted", "c1-c3 merged")
    assert not edge_ids(around) & inactive
    assert gone == GraphResult()


def test_unknown_and_foreign_seeds_are_ignored_and_foreign_ids_never_leak(
    graph_backend: GraphBackend, shapes: Shapes
):
    foreign_ids = set(shapes.foreign.ids.values())
    only_foreign = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes.foreign["c2"], shapes.foreign["h"], 10**12], hops=3
    )
    mixed = graph_backend.neighborhood(
        workspace_id=shapes.ws, seeds=[shapes["c2"], shapes.foreign["c2"]], hops=3
    )
    no_seeds = graph_backend.neighborhood(workspace_id=shapes.ws, seeds=[], hops=2)

    assert only_foreign == GraphResult()
    assert no_seeds == GraphResult()
    assert set(names(shapes, mixed)) == {"c0", "c1", "c2", "c3", "c4"}
    assert not {n.id for n in mixed.nodes} & foreign_ids
    assert not edge_ids(mixed) & set(shapes.foreign.relations.values())


def test_the_other_workspace_answers_from_its_own_rows(graph_backend: GraphBackend, shapes):
    result = graph_backend.neighborhood(
        workspace_id=shapes.foreign.pk, seeds=[shapes.foreign["h"], shapes["h"]], limit=1000
    )

    assert len(result.nodes) == 1 + SPOKES + 20
    assert {n.id for n in result.nodes} <= set(shapes.foreign.ids.values())


# --- shortest path ------------------------------------------------------------------------


def test_a_shortest_path_lists_nodes_in_order_and_one_edge_per_hop(
    graph_backend: GraphBackend, shapes: Shapes
):
    path = graph_backend.shortest_path(
        workspace_id=shapes.ws, source=shapes["c0"], target=shapes["c4"]
    )

    path = assert_path(shapes, path, ["c0", "c1", "c2", "c3", "c4"])
    assert edge_ids(path) == relations(shapes, "c0-c1", "c1-c2", "c2-c3", "c3-c4")
    assert [e.weight for e in path.edges] == [1.0, 2.0, 3.0, 4.0]
    assert [e.type for e in path.edges] == ["part_of"] * 4
    assert path.nodes[-1].degree == 1


def test_paths_ignore_edge_direction(graph_backend: GraphBackend, shapes: Shapes):
    path = graph_backend.shortest_path(
        workspace_id=shapes.ws, source=shapes["c4"], target=shapes["c1"]
    )

    assert_path(shapes, path, ["c4", "c3", "c2", "c1"])


def test_max_hops_bounds_the_path(graph_backend: GraphBackend, shapes: Shapes):
    too_short = graph_backend.shortest_path(
        workspace_id=shapes.ws, source=shapes["c0"], target=shapes["c4"], max_hops=3
    )
    enough = graph_backend.shortest_path(
        workspace_id=shapes.ws, source=shapes["c0"], target=shapes["c4"], max_hops=4
    )
    one = graph_backend.shortest_path(
        workspace_id=shapes.ws, source=shapes["c0"], target=shapes["c1"], max_hops=1
    )

    assert too_short is None
    assert enough is not None
    assert enough.length == 4
    assert_path(shapes, one, ["c0", "c1"])


def test_the_shortest_of_several_routes_wins(graph_backend: GraphBackend, shapes: Shapes):
    around_the_cycle = graph_backend.shortest_path(
        workspace_id=shapes.ws, source=shapes["y0"], target=shapes["y2"]
    )
    across_the_hub = graph_backend.shortest_path(
        workspace_id=shapes.ws, source=shapes[spoke(7)], target=shapes["q3"]
    )

    assert_path(shapes, around_the_cycle, ["y0", "y2"])
    assert_path(shapes, across_the_hub, [spoke(7), "h", spoke(3), "q3"])


def test_a_path_from_a_node_to_itself_is_that_node(graph_backend: GraphBackend, shapes):
    path = graph_backend.shortest_path(
        workspace_id=shapes.ws, source=shapes["s0"], target=shapes["s0"]
    )
    isolated = graph_backend.shortest_path(
        workspace_id=shapes.ws, source=shapes["i0"], target=shapes["i0"]
    )

    assert_path(shapes, path, ["s0"])
    assert path is not None
    assert path.length == 0
    assert_path(shapes, isolated, ["i0"])


def test_no_path_between_parts_that_do_not_touch(graph_backend: GraphBackend, shapes: Shapes):
    assert (
        graph_backend.shortest_path(
            workspace_id=shapes.ws, source=shapes["c0"], target=shapes["y0"], max_hops=6
        )
        is None
    )
    assert (
        graph_backend.shortest_path(
            workspace_id=shapes.ws, source=shapes["i0"], target=shapes["h"], max_hops=6
        )
        is None
    )


def test_relation_types_restrict_the_path(graph_backend: GraphBackend, shapes: Shapes):
    owns = graph_backend.shortest_path(
        workspace_id=shapes.ws, source=shapes["m1"], target=shapes["m0"], relation_types=["owns"]
    )
    wrong_type = graph_backend.shortest_path(
        workspace_id=shapes.ws,
        source=shapes["c0"],
        target=shapes["c2"],
        relation_types=["related_to"],
    )

    owns = assert_path(shapes, owns, ["m1", "m0"])
    assert edge_ids(owns) == relations(shapes, "m0-m1 owns")
    assert wrong_type is None


def test_paths_never_use_or_reach_merged_deleted_or_foreign_rows(
    graph_backend: GraphBackend, shapes: Shapes
):
    def between(source: int, target: int) -> PathResult | None:
        return graph_backend.shortest_path(workspace_id=shapes.ws, source=source, target=target)

    # the deleted c0 -> c4 shortcut does not make the chain one hop long
    assert_path(shapes, between(shapes["c0"], shapes["c4"]), ["c0", "c1", "c2", "c3", "c4"])
    for gone in ("deleted", "merged"):
        assert between(shapes["c2"], shapes[gone]) is None
        assert between(shapes[gone], shapes[gone]) is None
    assert between(shapes["c0"], shapes.foreign["c1"]) is None
    assert between(shapes.foreign["c0"], shapes.foreign["c1"]) is None
    assert between(shapes.foreign["c0"], shapes.foreign["c0"]) is None
    assert between(10**12, shapes["c0"]) is None


# --- hubs -------------------------------------------------------------------------------------


def test_hubs_are_ordered_by_degree_then_mentions_then_id(graph_backend: GraphBackend, shapes):
    top = graph_backend.hubs(workspace_id=shapes.ws, limit=3)

    # m0 and m1 both have degree 3; m1 has more mentions
    assert [shapes.name_of(n.id) for n in top] == ["h", "m1", "m0"]
    assert [n.degree for n in top] == [SPOKES, 3, 3]
    assert top[0].type == "organization"
    assert top[0].mention_count == 4


def test_hubs_of_one_entity_type(graph_backend: GraphBackend, shapes: Shapes):
    people = graph_backend.hubs(workspace_id=shapes.ws, entity_type="person", limit=10)
    unknown = graph_backend.hubs(workspace_id=shapes.ws, entity_type="no-such-type")

    # c4 and c0 tie on degree 1: c4 has more mentions; merged and deleted people are absent
    assert [shapes.name_of(n.id) for n in people] == ["m0", "c2", "c4", "c0"]
    assert [n.degree for n in people] == [3, 2, 1, 1]
    assert unknown == []


def test_hubs_include_isolated_entities_last_and_respect_the_limit(
    graph_backend: GraphBackend, shapes: Shapes
):
    events = graph_backend.hubs(workspace_id=shapes.ws, entity_type="event")
    everything = graph_backend.hubs(workspace_id=shapes.ws, limit=1000)

    assert [(shapes.name_of(n.id), n.degree) for n in events] == [("i0", 0)]
    assert len(everything) == 319
    assert everything[-1].degree == 0
    assert len(graph_backend.hubs(workspace_id=shapes.ws, limit=5)) == 5


def test_hubs_never_come_from_another_workspace(graph_backend: GraphBackend, shapes: Shapes):
    home = graph_backend.hubs(workspace_id=shapes.ws, limit=1000)
    foreign = graph_backend.hubs(workspace_id=shapes.foreign.pk, limit=1)

    assert {n.id for n in home} <= set(shapes.home.ids.values())
    assert [(n.id, n.degree) for n in foreign] == [(shapes.foreign["h"], SPOKES + 20)]


# --- subgraph -------------------------------------------------------------------------------


def test_a_subgraph_is_the_given_entities_and_the_edges_among_them(
    graph_backend: GraphBackend, shapes: Shapes
):
    result = graph_backend.subgraph(
        workspace_id=shapes.ws, ids=[shapes["c3"], shapes["c1"], shapes["c2"], shapes["m0"]]
    )

    assert sorted(names(shapes, result)) == ["c1", "c2", "c3", "m0"]
    assert [n.id for n in result.nodes] == sorted(n.id for n in result.nodes)
    assert edge_ids(result) == relations(shapes, "c1-c2", "c2-c3")
    # degrees are the entities' own, not within the subgraph
    assert {shapes.name_of(n.id): n.degree for n in result.nodes} == {
        "c1": 2,
        "c2": 2,
        "c3": 2,
        "m0": 3,
    }
    assert all(n.depth is None for n in result.nodes)
    assert_well_formed(result)


def test_a_subgraph_keeps_parallel_edges_and_self_loops(
    graph_backend: GraphBackend, shapes: Shapes
):
    parallel = graph_backend.subgraph(workspace_id=shapes.ws, ids=[shapes["m0"], shapes["m1"]])
    loop = graph_backend.subgraph(workspace_id=shapes.ws, ids=[shapes["s0"]])

    assert len(parallel.edges) == 3
    assert edge_ids(loop) == relations(shapes, "s0-s0")


def test_a_subgraph_drops_foreign_unknown_merged_and_deleted_ids(
    graph_backend: GraphBackend, shapes: Shapes
):
    result = graph_backend.subgraph(
        workspace_id=shapes.ws,
        ids=[
            shapes["c0"],
            shapes["c4"],
            shapes["deleted"],
            shapes["merged"],
            shapes.foreign["c1"],
            shapes.foreign["c0"],
            10**12,
        ],
    )

    assert names(shapes, result) == ["c0", "c4"]
    # the deleted c0 -> c4 shortcut is not an edge
    assert result.edges == []
    assert graph_backend.subgraph(workspace_id=shapes.ws, ids=[]) == GraphResult()
    assert (
        graph_backend.subgraph(workspace_id=shapes.ws, ids=[shapes.foreign["c0"]]) == GraphResult()
    )


# --- stats ------------------------------------------------------------------------------------


def test_stats_count_the_active_graph_exactly(graph_backend: GraphBackend, shapes: Shapes):
    stats = graph_backend.stats(workspace_id=shapes.ws)

    assert stats == GraphStats(
        entities=319,
        relations=317,
        entities_by_type={
            "concept": 3,
            "event": 1,
            "location": BUSY_SPOKES,
            "organization": 4,
            "person": 4,
            "product": SPOKES,
            "technology": 2,
        },
        relations_by_type={
            "located_in": BUSY_SPOKES,
            "owns": 1,
            "part_of": 4,
            "related_to": 3 + SPOKES + 1,
            "uses": 2,
            "works_for": 1,
        },
        # i0 | c0 c4 s1, 295 quiet spokes, 5 q | c1-3, y0-2, s0, 5 busy spokes, m0, m1 | h
        degree_distribution={"0": 1, "1": 303, "2-3": 14, "256-511": 1},
        max_degree=SPOKES,
        mean_degree=stats.mean_degree,
    )
    # 2 * 317 relations - 1 self-loop counted once, over 319 entities
    assert stats.mean_degree == pytest.approx(633 / 319)


def test_stats_of_each_workspace_are_its_own(graph_backend: GraphBackend, shapes: Shapes):
    foreign = graph_backend.stats(workspace_id=shapes.foreign.pk)

    assert foreign.entities == 319 + 20
    assert foreign.relations == 317 + 20
    assert foreign.max_degree == SPOKES + 20


def test_stats_of_an_empty_workspace_are_zero(graph_backend: GraphBackend, shapes: Shapes):
    assert graph_backend.stats(workspace_id=shapes.ws + shapes.foreign.pk + 1000) == GraphStats()
