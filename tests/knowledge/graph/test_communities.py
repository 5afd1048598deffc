"""Communities: Louvain over the active graph, stored on Entity.community, numbered by size;
their summaries, the task and the `communities` command."""

from __future__ import annotations

import json
from io import StringIO
from itertools import combinations

import pytest
from django.core.management import CommandError, call_command

from knowledge.actions.communities import do_compute_communities
from knowledge.actions.schema import do_ensure_default_schema
from knowledge.models import Entity, EntityState, EntityType, Relation, RelationType
from knowledge.selectors.communities import community_summaries
from knowledge.tasks import compute_communities
from workspaces.actions.workspaces import do_create_workspace
from workspaces.models import Workspace


class Builder:
    """Entities and relations written straight with the ORM, by name."""

    def __init__(self, slug: str) -> None:
        self.workspace = do_create_workspace(slug=slug)
        do_ensure_default_schema(workspace=self.workspace)
        self.person = EntityType.objects.get(workspace=self.workspace, name="person")
        self.related = RelationType.objects.get(workspace=self.workspace, name="related_to")
        self.ids: dict[str, int] = {}

    def entities(self, *names: str, mentions: int = 1, state: str = EntityState.ACTIVE) -> None:
        rows = Entity.objects.bulk_create(
            Entity(
                workspace=self.workspace,
                name=name,
                canonical_name=name.lower(),
                type=self.person,
                mention_count=mentions,
                state=state,
            )
            for name in names
        )
        self.ids.update({row.name: row.pk for row in rows})

    def relate(
        self, *pairs: tuple[str, str], weight: float = 1.0, state: str = EntityState.ACTIVE
    ) -> None:
        Relation.objects.bulk_create(
            Relation(
                workspace=self.workspace,
                source_id=self.ids[a],
                target_id=self.ids[b],
                type=self.related,
                weight=weight,
                state=state,
            )
            for a, b in pairs
        )

    def community(self, name: str) -> int | None:
        return Entity.objects.get(pk=self.ids[name]).community

    def communities(self) -> dict[str, int | None]:
        return {name: self.community(name) for name in self.ids}


def two_cliques(slug: str = "cliques") -> Builder:
    """Two cliques of six joined by one edge (a5 - b0), and one entity with no relation."""
    graph = Builder(slug)
    a = [f"a{i}" for i in range(6)]
    b = [f"b{i}" for i in range(6)]
    graph.entities(*a, *b)
    graph.entities("loner")
    graph.relate(*combinations(a, 2), weight=3.0)
    graph.relate(*combinations(b, 2), weight=3.0)
    graph.relate(("a5", "b0"), weight=1.0)
    return graph


def test_two_dense_cliques_joined_by_one_edge_are_two_communities(db):
    graph = two_cliques()

    report = do_compute_communities(workspace=graph.workspace)

    found = graph.communities()
    assert {found[f"a{i}"] for i in range(6)} == {0}
    # the same size: the one holding the smaller id comes first
    assert {found[f"b{i}"] for i in range(6)} == {1}
    assert found["loner"] == 2
    assert report.communities == 3
    assert report.entities == 13
    assert report.relations == 31
    assert report.largest == 6
    assert report.isolated == 1
    assert report.modularity > 0.4
    assert report.changed == 13


def test_a_second_run_on_the_same_graph_changes_nothing(db):
    graph = two_cliques()
    do_compute_communities(workspace=graph.workspace)
    first = graph.communities()

    again = do_compute_communities(workspace=graph.workspace)

    assert graph.communities() == first
    assert again.changed == 0


def test_communities_are_numbered_by_size_largest_first(db):
    graph = Builder("sizes")
    small = ["s0", "s1", "s2"]
    big = [f"g{i}" for i in range(7)]
    graph.entities(*small, *big, "x", "y")
    graph.relate(*combinations(small, 2))
    graph.relate(*combinations(big, 2))
    graph.relate(("x", "y"))

    do_compute_communities(workspace=graph.workspace)

    found = graph.communities()
    assert {found[name] for name in big} == {0}
    assert {found[name] for name in small} == {1}
    assert found["x"] == found["y"] == 2


def test_merged_and_deleted_rows_take_no_part_and_lose_their_number(db):
    graph = two_cliques("inactive")
    graph.entities("gone", state=EntityState.DELETED)
    Entity.objects.filter(pk=graph.ids["gone"]).update(community=4)
    # an edge that would tie the loner to clique b, had it not been deleted
    graph.relate(("loner", "b1"), weight=50.0, state=EntityState.DELETED)

    report = do_compute_communities(workspace=graph.workspace)

    assert graph.community("gone") is None
    assert graph.community("loner") == 2
    assert report.entities == 13


def test_a_graph_without_relations_gives_each_entity_its_own_community(db):
    graph = Builder("no-edges")
    graph.entities("p", "q", "r")

    report = do_compute_communities(workspace=graph.workspace)

    assert sorted(c for c in graph.communities().values() if c is not None) == [0, 1, 2]
    assert report.communities == 3
    assert report.modularity == 0.0


def test_relations_without_weight_still_hold_entities_together(db):
    graph = Builder("weightless")
    graph.entities("a", "b", "c", "d")
    graph.relate(("a", "b"), ("c", "d"), weight=0.0)

    do_compute_communities(workspace=graph.workspace)

    found = graph.communities()
    assert found["a"] == found["b"] != found["c"] == found["d"]


def test_computing_one_workspace_leaves_another_alone(db):
    home = two_cliques("home")
    other = two_cliques("other")

    do_compute_communities(workspace=home.workspace)

    assert set(other.communities().values()) == {None}


def test_summaries_list_communities_largest_first_with_their_best_connected_entities(db):
    graph = two_cliques("summaries")
    Entity.objects.filter(pk=graph.ids["a2"]).update(mention_count=9)
    do_compute_communities(workspace=graph.workspace)

    summaries = community_summaries(workspace=graph.workspace, top=3)

    assert [(s.id, s.size) for s in summaries] == [(0, 6), (1, 6), (2, 1)]
    # a5 and b0 carry the bridge (degree 6); then degree 5, more mentions first, then id
    assert [m.name for m in summaries[0].top] == ["a5", "a2", "a0"]
    assert [m.degree for m in summaries[0].top] == [6, 5, 5]
    assert [m.name for m in summaries[1].top] == ["b0", "b1", "b2"]
    assert summaries[2].top[0].name == "loner"
    assert summaries[2].top[0].degree == 0
    assert summaries[0].top[0].type == "person"
    assert community_summaries(workspace=graph.workspace, top=1, limit=1)[0].top[0].name == "a5"


def test_summaries_are_empty_before_the_first_run(db):
    graph = two_cliques("never-run")

    assert community_summaries(workspace=graph.workspace) == []


def test_the_task_reloads_the_workspace_and_tolerates_its_deletion(db):
    graph = two_cliques("task")

    assert compute_communities.call(graph.workspace.pk) == "3 communities over 13 entities"
    assert graph.community("b3") == 1
    missing = Workspace.objects.order_by("-pk").first().pk + 1  # type: ignore[union-attr]
    assert compute_communities.call(missing) == "missing"


def run(*args: str) -> str:
    out = StringIO()
    call_command("communities", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_the_command_stores_and_prints_the_largest_communities(db):
    graph = two_cliques("command")

    text = run("--workspace", "command", "--top", "2")
    body = json.loads(run("--workspace", "command", "--json", "--show", "1"))

    assert text.startswith("3 communities over 13 entities and 31 relations")
    assert "#0  6 entities: a5 (6), a0 (5)" in text
    assert "#2  1 entities: loner (0)" in text
    assert graph.community("a0") == 0
    assert body["communities"] == 3
    assert body["changed"] == 0
    assert [c["id"] for c in body["largest_communities"]] == [0]
    assert body["largest_communities"][0]["top"][0]["name"] == "a5"


@pytest.mark.parametrize(
    "args", [["--workspace", "nowhere"], ["--workspace", "usage", "--top", "-1"]]
)
def test_the_command_exits_2_on_usage_errors(db, args):
    two_cliques("usage")

    with pytest.raises(CommandError) as error:
        run(*args)

    assert error.value.returncode == 2
