"""The community map's tables, written with the communities: a row per community and
sub-community, the relations between them, the run and its staleness; the split of large
communities into sub-communities; and queueing the computation once."""

from __future__ import annotations

import pytest
from django_tasks_db.models import DBTaskResult

from knowledge.actions.communities import do_compute_communities, do_request_communities
from knowledge.models import Community, CommunityLink, CommunityRun, Entity, EntityState, Relation
from knowledge.selectors.community_map import (
    computation_pending,
    graph_size,
    last_run,
    map_is_stale,
)
from tests.knowledge.community_data import nested, two_cliques
from workspaces.actions.workspaces import do_create_workspace

pytestmark = pytest.mark.django_db


def stored(workspace) -> dict[str, tuple[int, int]]:
    """key -> (size, children) of the stored map."""
    return {
        (f"{c.community}" if c.subcommunity is None else f"{c.community}.{c.subcommunity}"): (
            c.size,
            c.children,
        )
        for c in Community.objects.for_workspace(workspace)
    }


def links(workspace) -> set[tuple[int | None, int, int, int]]:
    return {
        (link.community, link.source, link.target, link.count)
        for link in CommunityLink.objects.for_workspace(workspace)
    }


def test_two_cliques_joined_by_one_edge_store_two_communities_and_one_link():
    graph = two_cliques(do_create_workspace(slug="cliques"))

    do_compute_communities(workspace=graph.workspace)

    # the loner, a community of one without relations, has no row
    assert stored(graph.workspace) == {"0": (6, 0), "1": (6, 0)}
    assert links(graph.workspace) == {(None, 0, 1, 1)}
    first = Community.objects.get(workspace=graph.workspace, community=0)
    # a5 carries the bridge (degree 6); then degree 5 by id
    assert first.label == "a5 · a0 · a1"
    assert [m["name"] for m in first.top] == ["a5", "a0", "a1", "a2", "a3"]
    assert first.top[0] == {"id": graph.ids["a5"], "name": "a5", "type": "person"}
    run = CommunityRun.objects.get(workspace=graph.workspace)
    assert (run.entities, run.relations, run.communities) == (13, 31, 3)


def test_communities_larger_than_the_split_setting_are_split_into_sub_communities(settings):
    settings.COMMUNITY_SPLIT_ABOVE = 10
    graph = nested(do_create_workspace(slug="nested"))

    report = do_compute_communities(workspace=graph.workspace)

    assert (report.communities, report.split, report.subcommunities) == (3, 3, 12)
    map_ = stored(graph.workspace)
    assert {k: v for k, v in map_.items() if "." not in k} == {
        "0": (20, 4),
        "1": (20, 4),
        "2": (20, 4),
    }
    assert sorted(k for k in map_ if "." in k) == [f"{g}.{s}" for g in range(3) for s in range(4)]
    assert all(size == 5 for k, (size, _) in map_.items() if "." in k)
    # each clique's five members share one sub-community, the four cliques four of them
    for g in range(3):
        subs = [{graph.entity(f"g{g}s{s}e{e}").subcommunity for e in range(5)} for s in range(4)]
        assert all(len(sub) == 1 for sub in subs)
        assert set.union(*subs) == {0, 1, 2, 3}
    found = links(graph.workspace)
    # the chain between the groups (the middle one is numbered by its smallest id: 1)
    assert {link for link in found if link[0] is None} == {(None, 0, 1, 1), (None, 1, 2, 1)}
    # three edges between every two cliques of a group
    for g in range(3):
        inside = [link for link in found if link[0] == g]
        assert len(inside) == 6
        assert {link[3] for link in inside} == {3}


def test_communities_at_or_under_the_split_setting_stay_whole(settings):
    settings.COMMUNITY_SPLIT_ABOVE = 20
    graph = nested(do_create_workspace(slug="whole"))

    report = do_compute_communities(workspace=graph.workspace)

    assert report.split == 0
    assert not Entity.objects.filter(workspace=graph.workspace, subcommunity__isnull=False).exists()
    assert all("." not in key for key in stored(graph.workspace))


def test_a_recomputation_replaces_the_map():
    graph = two_cliques(do_create_workspace(slug="again"))
    do_compute_communities(workspace=graph.workspace)
    graph.relate(("loner", "a1"))

    do_compute_communities(workspace=graph.workspace)

    assert stored(graph.workspace) == {"0": (7, 0), "1": (6, 0)}
    assert CommunityRun.objects.filter(workspace=graph.workspace).count() == 1
    assert CommunityLink.objects.filter(workspace=graph.workspace).count() == 1


def test_computing_one_workspace_writes_no_map_for_another():
    home = two_cliques(do_create_workspace(slug="home"))
    other = two_cliques(do_create_workspace(slug="other"))

    do_compute_communities(workspace=home.workspace)

    assert stored(other.workspace) == {}
    assert last_run(other.workspace) is None


def test_the_map_is_stale_once_the_graph_changes():
    graph = two_cliques(do_create_workspace(slug="stale"))
    assert map_is_stale(None, graph.workspace)
    do_compute_communities(workspace=graph.workspace)
    assert not map_is_stale(last_run(graph.workspace), graph.workspace)

    graph.relate(("loner", "b3"))

    assert map_is_stale(last_run(graph.workspace), graph.workspace)


def test_a_relation_deleted_and_another_added_still_make_the_map_stale():
    graph = two_cliques(do_create_workspace(slug="swap"))
    do_compute_communities(workspace=graph.workspace)
    gone = Relation.objects.filter(workspace=graph.workspace).order_by("pk")[0]
    Relation.objects.filter(pk=gone.pk).update(state=EntityState.DELETED)
    graph.relate(("loner", "b3"))

    run = CommunityRun.objects.get(workspace=graph.workspace)
    size = graph_size(graph.workspace)
    # the same counts: only the newest relation id tells
    assert (size.entities, size.relations) == (run.entities, run.relations)
    assert map_is_stale(run, graph.workspace)


def test_the_computation_is_queued_once_until_it_has_run():
    graph = two_cliques(do_create_workspace(slug="queue"))
    other = two_cliques(do_create_workspace(slug="queue-other"))

    assert do_request_communities(workspace=graph.workspace) is True
    assert do_request_communities(workspace=graph.workspace) is False
    assert computation_pending(graph.workspace)
    assert not computation_pending(other.workspace)
    assert do_request_communities(workspace=other.workspace) is True
    queued = DBTaskResult.objects.filter(task_path="knowledge.tasks.compute_communities")
    assert sorted(t.args_kwargs["args"][0] for t in queued) == sorted(
        [graph.workspace.pk, other.workspace.pk]
    )

    queued.update(status="SUCCESSFUL")

    assert not computation_pending(graph.workspace)
    assert do_request_communities(workspace=graph.workspace) is True
