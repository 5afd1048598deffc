"""Keeping projections in step: write-through after commit, full rebuilds, `sync_graph`.

The projection here is `InMemoryProjection` (tests/knowledge/graph/projection.py), a real
implementation of the backend write contract standing in for the Neo4j server this
machine cannot run; Postgres, the actions and the hooks are the real ones. The Neo4j
backend itself is exercised where a server is needed in test_neo4j_backend.py.
"""

from __future__ import annotations

import itertools
import json
import logging
import subprocess
from collections.abc import Callable, Iterator
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from ingest.actions.sources import do_delete_source
from knowledge.actions.curation.entities import (
    do_delete_entity,
    do_rename_entity,
    do_restore_entity,
    do_retype_entity,
)
from knowledge.actions.curation.merge import do_merge_entities, do_unmerge
from knowledge.actions.schema import do_ensure_default_schema
from knowledge.graph.base import EntityRow, RelationRow
from knowledge.graph.sync import (
    SyncReport,
    do_sync_workspace,
    push_graph_changes,
    read_graph_changes,
    schedule_graph_sync,
)
from knowledge.models import Entity, EntityState, EntityType, Relation, RelationType
from tests.knowledge.graph.projection import (
    MEMORY_BACKEND,
    PASSWORD,
    POSTGRES_BACKEND,
    Store,
    closed_port,
    forget_graph_backends,
    store,
    unreachable_neo4j,
)
from tests.support import start_manage, subprocess_env
from workspaces.actions.workspaces import do_create_workspace
from workspaces.models import Workspace


@pytest.fixture
def graph_config(settings) -> Iterator[Callable[..., None]]:
    """Point GRAPH_BACKENDS at these entries for one test (alias=entry keywords)."""

    def use(**backends: dict[str, Any]) -> None:
        settings.GRAPH_BACKENDS = backends
        forget_graph_backends()

    yield use
    forget_graph_backends()


@pytest.fixture
def projected(graph_config) -> Store:
    """The default backend is an in-memory projection; returns its store."""
    graph_config(default={"BACKEND": MEMORY_BACKEND})
    return store("default")


class Graph:
    """Entities and relations written straight to Postgres (no evidence needed)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        do_ensure_default_schema(workspace=workspace)

    def entity(self, name: str, kind: str = "person", **fields: Any) -> Entity:
        return Entity.objects.create(
            workspace=self.workspace,
            name=name,
            canonical_name=name.casefold(),
            type=EntityType.objects.get(workspace=self.workspace, name=kind),
            **fields,
        )

    def relation(
        self, source: Entity, target: Entity, kind: str = "related_to", **fields: Any
    ) -> Relation:
        return Relation.objects.create(
            workspace=self.workspace,
            source=source,
            target=target,
            type=RelationType.objects.get(workspace=self.workspace, name=kind),
            **fields,
        )


@pytest.fixture
def graph(alice) -> Graph:
    return Graph(alice.workspace)


def postgres_state(workspace: Workspace) -> tuple[dict[int, EntityRow], dict[int, RelationRow]]:
    """What a projection of the workspace must hold, straight from the ORM."""
    entities = {
        e.pk: EntityRow(
            id=e.pk,
            workspace_id=workspace.pk,
            name=e.name,
            type=e.type.name,
            mention_count=e.mention_count,
            community=e.community,
        )
        for e in Entity.objects.filter(workspace=workspace, state=EntityState.ACTIVE)
        .select_related("type")
        .order_by("pk")
    }
    relations = {
        r.pk: RelationRow(
            id=r.pk,
            workspace_id=workspace.pk,
            source=r.source_id,
            target=r.target_id,
            type=r.type.name,
            weight=r.weight,
        )
        for r in Relation.objects.filter(workspace=workspace, state=EntityState.ACTIVE)
        .filter(source__state=EntityState.ACTIVE, target__state=EntityState.ACTIVE)
        .select_related("type")
        .order_by("pk")
    }
    return entities, relations


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


# --- write-through -------------------------------------------------------------------------


def test_scheduling_without_a_projection_backend_runs_no_query_and_registers_nothing(
    db, graph_config, django_assert_num_queries, django_capture_on_commit_callbacks
):
    graph_config(default={"BACKEND": POSTGRES_BACKEND})
    with django_capture_on_commit_callbacks() as callbacks, django_assert_num_queries(0):
        schedule_graph_sync(workspace_id=1, entity_ids=[1, 2, 3], relation_ids=[4])
    assert callbacks == []


def test_scheduling_nothing_registers_nothing(projected, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        schedule_graph_sync(workspace_id=1, entity_ids=[], relation_ids=set())
    assert callbacks == []


def test_a_rename_reaches_the_projection_after_the_commit(
    graph, projected, django_capture_on_commit_callbacks
):
    ada = graph.entity("Ada")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        do_rename_entity(workspace=graph.workspace, entity_id=ada.pk, name="Ada Lovelace")
        assert projected.entities == {}  # not before the commit
    assert len(callbacks) == 1
    assert projected.entities[ada.pk].name == "Ada Lovelace"
    assert projected.entities[ada.pk].type == "person"


def test_a_rolled_back_change_pushes_nothing(graph, projected, django_capture_on_commit_callbacks):
    ada = graph.entity("Ada")

    def rename_then_fail() -> None:
        with transaction.atomic():
            do_rename_entity(workspace=graph.workspace, entity_id=ada.pk, name="Ada Lovelace")
            raise RuntimeError("the caller's transaction fails after the rename")

    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(RuntimeError),
    ):
        rename_then_fail()
    assert callbacks == []
    assert projected.entities == {}


def test_a_retype_pushes_the_new_type(graph, projected, django_capture_on_commit_callbacks):
    acme = graph.entity("Acme", "person")
    with django_capture_on_commit_callbacks(execute=True):
        do_retype_entity(workspace=graph.workspace, entity_id=acme.pk, type_name="organization")
    assert projected.entities[acme.pk].type == "organization"


def test_delete_removes_the_entity_and_its_relations_and_restore_brings_them_back(
    graph, projected, django_capture_on_commit_callbacks
):
    ada, charles, bob = graph.entity("Ada"), graph.entity("Charles"), graph.entity("Bob")
    graph.relation(ada, charles, "works_for", weight=2.0)
    graph.relation(bob, charles)
    do_sync_workspace(workspace=graph.workspace)
    assert (projected.entities, projected.relations) == postgres_state(graph.workspace)

    with django_capture_on_commit_callbacks(execute=True):
        do_delete_entity(workspace=graph.workspace, entity_id=charles.pk)
    assert charles.pk not in projected.entities
    assert projected.relations == {}
    assert (projected.entities, projected.relations) == postgres_state(graph.workspace)

    with django_capture_on_commit_callbacks(execute=True):
        do_restore_entity(workspace=graph.workspace, entity_id=charles.pk)
    assert len(projected.relations) == 2
    assert (projected.entities, projected.relations) == postgres_state(graph.workspace)


def test_merge_moves_edges_to_the_survivor_and_unmerge_puts_them_back(
    graph, projected, django_capture_on_commit_callbacks
):
    google, goog, larry, sergey = (
        graph.entity("Google", "organization"),
        graph.entity("Goog", "organization"),
        graph.entity("Larry"),
        graph.entity("Sergey"),
    )
    graph.relation(larry, google, "works_for")
    moved = graph.relation(sergey, goog, "works_for")
    graph.relation(larry, goog, "works_for")  # folds into larry -> google
    do_sync_workspace(workspace=graph.workspace)
    before = postgres_state(graph.workspace)

    with django_capture_on_commit_callbacks(execute=True):
        event = do_merge_entities(
            workspace=graph.workspace, survivor_id=google.pk, merged_ids=[goog.pk]
        )
    assert goog.pk not in projected.entities
    assert projected.relations[moved.pk].target == google.pk
    assert len(projected.relations) == 2
    assert (projected.entities, projected.relations) == postgres_state(graph.workspace)

    with django_capture_on_commit_callbacks(execute=True):
        do_unmerge(workspace=graph.workspace, event_id=event.pk)
    assert (projected.entities, projected.relations) == postgres_state(graph.workspace)
    assert set(projected.relations) == set(before[1])
    assert projected.relations[moved.pk].target == goog.pk


def test_extraction_and_source_deletion_reach_the_projection(
    alice, projected, ingest_text, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        source = ingest_text(
            "Ada Lovelace worked with Charles Babbage in London. "
            "Charles Babbage designed the Analytical Engine in London."
        )
    entities, relations = postgres_state(alice.workspace)
    assert entities, "the offline extractor found entities"
    assert relations, "and linked those in one sentence"
    assert (projected.entities, projected.relations) == (entities, relations)

    with django_capture_on_commit_callbacks(execute=True):
        do_delete_source(source_id=source.pk)
    assert postgres_state(alice.workspace) == ({}, {})
    assert projected.of(alice.workspace.pk) == ({}, {})


def test_a_failed_push_is_logged_with_the_ids_and_the_write_stands(
    graph, graph_config, caplog, django_capture_on_commit_callbacks
):
    graph_config(default=unreachable_neo4j())
    ada = graph.entity("Ada")
    with (
        caplog.at_level(logging.ERROR, logger="knowledge.graph.sync"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        do_rename_entity(workspace=graph.workspace, entity_id=ada.pk, name="Ada Lovelace")
    ada.refresh_from_db()
    assert ada.name == "Ada Lovelace"
    [record] = [r for r in caplog.records if "graph_sync_failed" in r.getMessage()]
    message = record.getMessage()
    assert f"workspace={graph.workspace.pk}" in message
    assert f"entities=[{ada.pk}]" in message
    assert "backend=default" in message
    assert "sync_graph" in message
    assert "unavailable" in message
    assert PASSWORD not in caplog.text


def test_push_reads_rows_as_they_are_now_and_sends_relation_endpoints_along(graph, projected):
    ada, charles, gone = graph.entity("Ada"), graph.entity("Charles"), graph.entity("Gone")
    kept = graph.relation(ada, charles)
    dangling = graph.relation(ada, gone)
    Entity.objects.filter(pk=gone.pk).update(state=EntityState.DELETED)
    missing_id = charles.pk + 1000

    changes = read_graph_changes(
        workspace_id=graph.workspace.pk,
        entity_ids=[gone.pk, missing_id],
        relation_ids=[kept.pk, dangling.pk],
    )
    # Ada and Charles were not named, but they are the endpoints of an edge being written.
    assert sorted(e.id for e in changes.entities) == [ada.pk, charles.pk]
    assert [r.id for r in changes.relations] == [kept.pk]
    assert changes.gone_entities == [gone.pk, missing_id]
    # An active relation whose endpoint is deleted is not part of the active graph.
    assert changes.gone_relations == [dangling.pk]

    assert push_graph_changes(
        workspace_id=graph.workspace.pk, entity_ids=[ada.pk], relation_ids=[kept.pk]
    )
    assert set(projected.entities) == {ada.pk, charles.pk}


def test_push_never_touches_another_workspace(graph, projected, bob):
    ada = graph.entity("Ada")
    push_graph_changes(workspace_id=bob.workspace.pk, entity_ids=[ada.pk], relation_ids=[])
    assert projected.entities == {}


# --- rebuild ---------------------------------------------------------------------------------


def test_rebuild_clears_then_writes_the_active_graph_in_batches(graph, graph_config, bob):
    graph_config(default={"BACKEND": MEMORY_BACKEND, "OPTIONS": {"BATCH_SIZE": 2}})
    projected = store("default")
    people = [graph.entity(name) for name in ("Ada", "Bob", "Cy", "Di", "Ed")]
    for a, b in itertools.pairwise(people):
        graph.relation(a, b)
    merged = graph.entity("Merged")
    Entity.objects.filter(pk=merged.pk).update(state=EntityState.MERGED)
    # Left over from an older projection: goes. Another workspace's rows: stay.
    projected.entities[10**9] = EntityRow(
        id=10**9, workspace_id=graph.workspace.pk, name="stale", type="person"
    )
    theirs = EntityRow(id=10**9 + 1, workspace_id=bob.workspace.pk, name="theirs", type="person")
    projected.entities[theirs.id] = theirs
    seen: list[tuple[int, int]] = []

    report = do_sync_workspace(
        workspace=graph.workspace,
        progress=lambda r: seen.append((r.entities + r.relations, r.entities_total)),
    )

    assert report.projected
    assert (report.entities, report.relations) == (5, 4)
    assert (report.entities_total, report.relations_total) == (5, 4)
    assert projected.schema_calls == 1
    assert projected.cleared == [graph.workspace.pk]
    assert projected.of(graph.workspace.pk) == postgres_state(graph.workspace)
    assert projected.entities[theirs.id] == theirs
    assert projected.batches == [2, 2, 1, 2, 2]
    assert seen == [(0, 5), (2, 5), (4, 5), (5, 5), (7, 5), (9, 5)]


def test_rebuild_with_a_backend_that_reads_postgres_does_nothing(graph, graph_config):
    graph_config(default={"BACKEND": POSTGRES_BACKEND})
    graph.entity("Ada")
    report = do_sync_workspace(workspace=graph.workspace)
    assert report == SyncReport(
        workspace=graph.workspace.slug,
        alias="default",
        backend=POSTGRES_BACKEND,
        projected=False,
    )


# --- manage.py sync_graph --------------------------------------------------------------------


def test_sync_graph_with_the_postgres_backend_says_there_is_nothing_to_project(graph, graph_config):
    graph_config(default={"BACKEND": POSTGRES_BACKEND})
    out, _ = run("sync_graph", "--workspace", graph.workspace.slug)
    assert "reads Postgres directly: nothing to project" in out


def test_sync_graph_fills_a_projection_and_reports_as_json(graph, projected):
    ada, charles = graph.entity("Ada"), graph.entity("Charles")
    graph.relation(ada, charles)
    out, _ = run("sync_graph", "--workspace", graph.workspace.slug, "--json")
    body = json.loads(out)
    assert body["ok"] is True
    assert body["projected"] is True
    assert (body["entities"], body["relations"]) == (2, 1)
    assert (projected.entities, projected.relations) == postgres_state(graph.workspace)
    text, _ = run("sync_graph", "--workspace", graph.workspace.slug)
    assert f"workspace {graph.workspace.slug}: 2 entities and 1 relations projected" in text


def test_sync_graph_against_an_unreachable_neo4j_fails_with_one_clear_line(graph, graph_config):
    graph_config(default=unreachable_neo4j())
    with pytest.raises(CommandError) as failure:
        run("sync_graph", "--workspace", graph.workspace.slug)
    assert failure.value.returncode == 1
    message = str(failure.value)
    assert message.startswith("sync_graph failed: Neo4j at bolt://127.0.0.1:")
    assert "server unavailable" in message
    assert "\n" not in message
    assert PASSWORD not in message


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--workspace", "nowhere"], "Workspace 'nowhere' not found."),
        (["--workspace", "acme", "--backend", "replica"], "No graph backend 'replica'"),
    ],
)
def test_sync_graph_usage_errors_exit_2(graph, projected, args, expected):
    with pytest.raises(CommandError, match=expected) as failure:
        run("sync_graph", *args)
    assert failure.value.returncode == 2


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_sync_graph_in_a_shell_prints_no_traceback_and_no_password():
    do_create_workspace(slug="shell", name="Shell")
    env = subprocess_env(
        GRAPH_BACKEND="neo4j",
        NEO4J_URL=f"bolt://127.0.0.1:{closed_port()}",
        NEO4J_PASSWORD=PASSWORD,
    )
    process = start_manage(
        "sync_graph",
        "--workspace",
        "shell",
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = process.communicate(timeout=120)
    assert process.returncode == 1, (out, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("CommandError: sync_graph failed: Neo4j at bolt://127.0.0.1:")
    assert PASSWORD not in out + err
