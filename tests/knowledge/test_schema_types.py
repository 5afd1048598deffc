"""The schema registry's type administration (knowledge/actions/schema.py,
selectors/schema.py): domain and range set, shown to the model and its violations
counted, and every change logged and undone. Merging two types is curation of each row:
tests/knowledge/actions/curation/test_types.py. Graphs are written into the real tables."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.management import call_command

from knowledge.actions.curation.types import do_undo_schema_change
from knowledge.actions.schema import (
    do_accept_type,
    do_rename_type,
    do_retire_type,
    do_set_relation_domain,
)
from knowledge.models import (
    EntityType,
    RelationType,
    TypeStatus,
)
from knowledge.models.schema import TypeChange
from knowledge.prompts import load_prompts
from knowledge.selectors.schema import get_schema_snapshot, list_violations, violation_counts
from tests.knowledge.graph_data import make_graph
from workspaces.errors import Conflict, InvalidInput

pytestmark = pytest.mark.django_db


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
