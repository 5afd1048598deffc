"""The schema registry's type administration (knowledge/actions/schema.py, type_merge.py,
selectors/schema.py): merging two types and undoing the merge exactly, conflicts left and
listed, domain and range set, shown to the model and its violations counted, and every
change logged and undone. Graphs are written into the real tables."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.management import call_command

from knowledge.actions.curation import do_rename_entity
from knowledge.actions.schema import (
    do_accept_type,
    do_add_type,
    do_rename_type,
    do_retire_type,
    do_set_relation_domain,
)
from knowledge.actions.type_merge import do_merge_types, do_undo_schema_change, do_unmerge_types
from knowledge.models import (
    CurationAction,
    CurationEvent,
    CurationRule,
    Entity,
    EntityType,
    Relation,
    RelationType,
    TypeStatus,
)
from knowledge.models.schema import TypeChange
from knowledge.prompts import load_prompts
from knowledge.selectors.schema import get_schema_snapshot, list_violations, violation_counts
from tests.knowledge.graph_data import make_graph
from workspaces.errors import Conflict, InvalidInput, NotFound

pytestmark = pytest.mark.django_db

ENTITY_STATE = ("type_id", "canonical_name", "curated", "type_curated", "blocking_keys")


def state(entity: Entity) -> tuple:
    fresh = Entity.objects.get(pk=entity.pk)
    return tuple(getattr(fresh, field) for field in ENTITY_STATE)


@pytest.fixture
def graph(alice):
    """Two gadgets (Widget, Gizmo) and a product (Gizmo) in acme; Ada works for Acme and
    for Widget, Paris works for Acme."""
    return make_graph(
        alice.workspace,
        entities={"Widget": "gadget", "Gizmo": "gadget", "Sprocket": "gadget",
                  "Ada": "person", "Acme": "organization", "Paris": "location"},
        relations=[("Ada", "Acme", "works_for"), ("Ada", "Widget", "works_for"),
                   ("Paris", "Acme", "works_for"), ("Ada", "Paris", "employed_by")],
    )  # fmt: skip


def test_merging_entity_types_retypes_each_entity_as_an_event_and_retires_the_source(alice, graph):
    ws = alice.workspace
    do_add_type(workspace=ws, kind="entity", name="device")
    clash = make_graph(ws, entities={"Gizmo": "device"}, path="other.txt").entities["Gizmo"]
    widget, gizmo, sprocket = (graph.entities[n] for n in ("Widget", "Gizmo", "Sprocket"))

    merge = do_merge_types(
        workspace=ws, kind="entity", source_name="gadget", into_name="device", actor=alice.user
    )

    device = EntityType.objects.get(workspace=ws, name="device")
    assert Entity.objects.get(pk=widget.pk).type_id == device.pk
    assert Entity.objects.get(pk=sprocket.pk).type_id == device.pk
    assert Entity.objects.get(pk=gizmo.pk).type.name == "gadget"  # left: "Gizmo" is a device
    assert [c["id"] for c in merge.conflicts] == [gizmo.pk]
    assert "is that type already" in merge.conflicts[0]["reason"]
    assert Entity.objects.get(pk=clash.pk).type_id == device.pk
    events = CurationEvent.objects.filter(pk__in=merge.events).order_by("pk")
    assert [(e.action, e.entity_id, e.actor_id) for e in events] == [
        (CurationAction.RETYPE, widget.pk, alice.user.pk),
        (CurationAction.RETYPE, sprocket.pk, alice.user.pk),
    ]
    assert EntityType.objects.get(workspace=ws, name="gadget").status == TypeStatus.RETIRED
    assert merge.summary.startswith("Merged the entity type gadget into device: 2 retyped")


def test_undoing_an_entity_type_merge_puts_every_entity_back_exactly(alice, graph):
    ws = alice.workspace
    do_add_type(workspace=ws, kind="entity", name="device")
    gadgets = [graph.entities[n] for n in ("Widget", "Gizmo", "Sprocket")]
    before = [state(e) for e in gadgets]

    merge = do_merge_types(workspace=ws, kind="entity", source_name="gadget", into_name="device")
    assert [state(e) for e in gadgets] != before
    assert CurationRule.objects.filter(event_id__in=merge.events, active=True).exists()

    do_unmerge_types(workspace=ws, merge_id=merge.pk, actor=alice.user)

    assert [state(e) for e in gadgets] == before
    assert not CurationRule.objects.filter(event_id__in=merge.events, active=True).exists()
    assert EntityType.objects.get(workspace=ws, name="gadget").status == TypeStatus.ACTIVE
    assert not CurationEvent.objects.filter(pk__in=merge.events, undone_by=None).exists()
    merge.refresh_from_db()
    assert merge.undone_at is not None and merge.undone_by == alice.user
    with pytest.raises(Conflict):
        do_unmerge_types(workspace=ws, merge_id=merge.pk)


def test_a_merge_whose_entities_changed_since_is_not_undone(alice, graph):
    ws = alice.workspace
    do_add_type(workspace=ws, kind="entity", name="device")
    widget = graph.entities["Widget"]
    merge = do_merge_types(workspace=ws, kind="entity", source_name="gadget", into_name="device")
    do_rename_entity(workspace=ws, entity_id=widget.pk, name="Widget Mk II")
    after = [state(graph.entities[n]) for n in ("Widget", "Gizmo", "Sprocket")]
    with pytest.raises(Conflict, match="changed since the merge"):
        do_unmerge_types(workspace=ws, merge_id=merge.pk)
    assert [state(graph.entities[n]) for n in ("Widget", "Gizmo", "Sprocket")] == after


def test_merging_relation_types_retypes_relations_and_undo_restores_them(alice, graph):
    ws = alice.workspace
    employed = Relation.objects.get(workspace=ws, type__name="employed_by")
    before = Relation.objects.values("type_id", "curated").get(pk=employed.pk)

    merge = do_merge_types(
        workspace=ws, kind="relation", source_name="employed_by", into_name="works_for"
    )
    assert Relation.objects.get(pk=employed.pk).type.name == "works_for"
    assert RelationType.objects.get(workspace=ws, name="employed_by").status == "retired"

    do_undo_schema_change(workspace=ws, change_id=merge.pk)
    assert Relation.objects.values("type_id", "curated").get(pk=employed.pk) == before
    assert RelationType.objects.get(workspace=ws, name="employed_by").status == "active"


def test_a_merge_is_refused_for_the_fallback_type_and_another_workspaces_types(alice, bob, graph):
    with pytest.raises(Conflict):
        do_merge_types(
            workspace=alice.workspace, kind="entity", source_name="concept", into_name="person"
        )
    make_graph(bob.workspace, entities={"Thing": "widgetry"})
    with pytest.raises(NotFound):
        do_merge_types(
            workspace=alice.workspace, kind="entity", source_name="widgetry", into_name="person"
        )
    with pytest.raises(NotFound):
        do_unmerge_types(workspace=bob.workspace, merge_id=0)


def test_domain_and_range_are_set_and_relations_outside_them_counted_and_listed(alice, graph):
    ws = alice.workspace
    do_set_relation_domain(
        workspace=ws, name="works_for", domain=["person"], range=["organization"]
    )
    works_for = RelationType.objects.get(workspace=ws, name="works_for")
    assert [t.name for t in works_for.domain.all()] == ["person"]
    assert [t.name for t in works_for.range.all()] == ["organization"]

    # Ada → Acme fits; Ada → Widget (a gadget) and Paris (a location) → Acme do not.
    assert violation_counts(ws) == {works_for.pk: 2}
    listed = list_violations(ws, type_id=works_for.pk)
    assert [(r.source.name, r.target.name) for r in listed] == [
        ("Ada", "Widget"),
        ("Paris", "Acme"),
    ]
    assert [r.pk for r in list_violations(ws, offset=1, limit=1)] == [listed[1].pk]

    # An open side allows any type.
    do_set_relation_domain(workspace=ws, name="works_for", domain=[], range=["organization"])
    assert violation_counts(ws) == {works_for.pk: 1}
    with pytest.raises(InvalidInput):
        do_set_relation_domain(workspace=ws, name="works_for", domain=["nonsense"], range=[])


def test_the_extraction_prompt_shows_domain_and_range_and_the_schema_hash_follows(alice, graph):
    ws = alice.workspace
    plain = get_schema_snapshot(ws)
    do_set_relation_domain(
        workspace=ws, name="works_for", domain=["person"], range=["organization", "location"]
    )
    snapshot = get_schema_snapshot(ws)
    assert snapshot.hash != plain.hash
    prompt = load_prompts(settings.EXTRACTION_PROMPT_VERSION).render_extract(
        text="Ada works at Acme.",
        entity_types=snapshot.entity_types,
        relation_types=snapshot.relation_types,
    )
    assert "- works_for: A person is employed by or works for an organization. " in prompt
    assert "(person → location | organization)" in prompt
    assert "(source types → target types)" in prompt
    assert "- located_in: Something is situated in or based at a location.\n" in prompt


def test_every_type_change_is_logged_and_undone_exactly(alice, graph):
    ws = alice.workspace
    do_accept_type(workspace=ws, kind="entity", name="gadget", actor=alice.user)
    retired = do_retire_type(workspace=ws, kind="entity", name="gadget", actor=alice.user)
    renamed = do_rename_type(
        workspace=ws, kind="entity", name="gadget", new_name="gizmo_kind", actor=alice.user
    )
    do_set_relation_domain(workspace=ws, name="works_for", domain=["person"], range=[])
    changes = list(TypeChange.objects.filter(workspace=ws).order_by("pk"))
    assert [(c.action, c.type_name, c.into) for c in changes] == [
        ("accept", "gadget", ""), ("retire", "gadget", ""), ("rename", "gadget", "gizmo_kind"),
        ("domain", "works_for", ""),
    ]  # fmt: skip
    assert retired.pk == renamed.pk

    # The retire came before the rename: the rename is undone first.
    with pytest.raises(Conflict):
        do_undo_schema_change(workspace=ws, change_id=changes[1].pk)
    for change in reversed(changes[1:]):
        do_undo_schema_change(workspace=ws, change_id=change.pk, actor=alice.user)
    gadget = EntityType.objects.get(pk=renamed.pk)
    assert (gadget.name, gadget.status) == ("gadget", TypeStatus.ACTIVE)
    assert not RelationType.objects.get(workspace=ws, name="works_for").domain.exists()


def test_the_schema_command_merges_sets_domain_and_lists_violations(alice, graph, capsys):
    call_command(
        "schema", "--workspace", "acme", "domain", "works_for",
        "--domain", "person", "--range", "organization",
    )  # fmt: skip
    call_command("schema", "--workspace", "acme", "list")
    listing = capsys.readouterr().out
    assert "person → organization, 2 outside" in listing
    call_command("schema", "--workspace", "acme", "merge", "employed_by", "works_for")
    merged = capsys.readouterr().out
    change = TypeChange.objects.get(workspace=alice.workspace, action="merge")
    assert f"change {change.pk}: Merged the relation type employed_by into works_for" in merged
