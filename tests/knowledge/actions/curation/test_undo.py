"""One undo for every curation decision (knowledge/actions/curation/undo.py): each puts
back exactly the rows the decision changed, is itself an event, and is refused — naming
the later event — while a later decision about the same entity or relation still stands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from knowledge.actions.curation.block import do_mark_not_same
from knowledge.actions.curation.entities import (
    do_add_alias,
    do_delete_entity,
    do_remove_alias,
    do_rename_entity,
    do_retype_entity,
    do_split_entity,
)
from knowledge.actions.curation.merge import do_merge_entities
from knowledge.actions.curation.relations import do_delete_relation, do_retype_relation
from knowledge.actions.curation.suggestions import do_reject_suggestion
from knowledge.actions.curation.undo import do_undo_event
from knowledge.actions.embeddings import VECTOR_FIELDS
from knowledge.actions.evidence import do_refresh_derived
from knowledge.actions.quality import do_block_entity_name
from knowledge.models import (
    Alias,
    CurationAction,
    CurationEvent,
    CurationRule,
    Entity,
    Mention,
    MergeSuggestion,
    Relation,
    RelationEvidence,
)
from tests.knowledge.graph_data import Built, make_graph
from workspaces.errors import Conflict, NotFound

pytestmark = pytest.mark.django_db

# Timestamps a write always moves, and vectors (arrays, recomputed from the name).
VOLATILE = {"updated_at", *VECTOR_FIELDS}


def rows(workspace) -> dict[str, Any]:
    """Every row curation may touch, in full (active rules only: an undo retires the rules
    a decision made, it does not delete them; and not the "not the same" an unmerge
    leaves on purpose, so that consolidation does not merge the pair again)."""

    def values(queryset) -> dict[int, dict[str, Any]]:
        return {
            row["id"]: {k: v for k, v in row.items() if k not in VOLATILE}
            for row in queryset.for_workspace(workspace).values()
        }

    return {
        "entities": values(Entity.objects),
        "aliases": values(Alias.objects),
        "mentions": values(Mention.objects),
        "relations": values(Relation.objects),
        "evidence": values(RelationEvidence.objects),
        "rules": values(
            CurationRule.objects.filter(active=True).exclude(event__action=CurationAction.UNMERGE)
        ),
        "suggestions": values(MergeSuggestion.objects),
    }


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Readable differences: rows added or gone, and each field changed."""
    found = []
    for table in before:
        old, new = before[table], after[table]
        found += [f"{table} {pk} gone" for pk in old.keys() - new.keys()]
        found += [f"{table} {pk} added" for pk in new.keys() - old.keys()]
        for pk in old.keys() & new.keys():
            found += [
                f"{table} {pk}.{field}: {old[pk][field]!r} -> {new[pk].get(field)!r}"
                for field in old[pk]
                if old[pk][field] != new[pk].get(field)
            ]
    return sorted(found)


@pytest.fixture
def built(alice) -> Built:
    """A small graph whose derived fields are as curation's own refresh computes them."""
    graph = make_graph(
        alice.workspace,
        entities={
            "Google": "organization",
            "Alphabet": "organization",
            "Larry Page": "person",
            "Mountain View": "location",
        },
        relations=[
            ("Larry Page", "Google", "works_for"),
            ("Google", "Alphabet", "part_of"),
            ("Google", "Mountain View", "located_in"),
        ],
    )
    do_refresh_derived(
        workspace_id=alice.workspace.pk,
        entity_ids=[e.pk for e in graph.entities.values()],
        relation_ids=[r.pk for r in graph.relations],
        prune=False,
    )
    return graph


def _ids(built: Built) -> dict[str, int]:
    return {name: e.pk for name, e in built.entities.items()}


def _suggestion(workspace, a: int, b: int) -> MergeSuggestion:
    low, high = sorted((a, b))
    return MergeSuggestion.objects.create(
        workspace=workspace, entity_a_id=low, entity_b_id=high, score=0.8, reasons=["fuzzy"]
    )


DECISIONS: dict[str, Callable[[Any, dict[str, int]], CurationEvent]] = {
    "merge": lambda ws, e: do_merge_entities(
        workspace=ws, survivor_id=e["Alphabet"], merged_ids=[e["Google"]]
    ),
    "auto_merge": lambda ws, e: do_merge_entities(
        workspace=ws,
        merged_ids=[e["Google"], e["Alphabet"]],
        automatic=True,
        reasons=["fuzzy name 0.93"],
    ),
    "rename": lambda ws, e: do_rename_entity(workspace=ws, entity_id=e["Google"], name="Googol"),
    "retype": lambda ws, e: do_retype_entity(
        workspace=ws, entity_id=e["Mountain View"], type_name="organization"
    ),
    "alias_add": lambda ws, e: do_add_alias(workspace=ws, entity_id=e["Google"], name="GOOG"),
    "delete": lambda ws, e: do_delete_entity(workspace=ws, entity_id=e["Larry Page"]),
    "block": lambda ws, e: do_block_entity_name(workspace=ws, entity_id=e["Larry Page"]),
    "not_same": lambda ws, e: do_mark_not_same(
        workspace=ws, entity_id=e["Google"], other_id=e["Alphabet"]
    ),
    "split": lambda ws, e: do_split_entity(
        workspace=ws,
        entity_id=e["Google"],
        name="Google Search",
        mention_ids=Mention.objects.filter(entity_id=e["Google"]).values_list("pk", flat=True),
    ),
    "relation_delete": lambda ws, e: do_delete_relation(
        workspace=ws, relation_id=Relation.objects.get(source_id=e["Larry Page"]).pk
    ),
}


@pytest.mark.parametrize("decision", sorted(DECISIONS))
def test_undoing_a_decision_puts_back_exactly_the_rows_it_changed(alice, built, decision):
    workspace = alice.workspace
    before = rows(workspace)
    event = DECISIONS[decision](workspace, _ids(built))

    undo = do_undo_event(workspace=workspace, event_id=event.pk, actor=alice.user)

    assert changes(before, rows(workspace)) == []
    event.refresh_from_db()
    assert event.undone_by_id == undo.pk
    assert undo.actor == alice.user
    with pytest.raises(Conflict, match="undone already"):
        do_undo_event(workspace=workspace, event_id=event.pk)


def test_undoing_an_alias_removal_brings_back_the_same_row_and_its_pin(alice, built):
    workspace, google = alice.workspace, built.entities["Google"].pk
    do_add_alias(workspace=workspace, entity_id=google, name="GOOG")
    before = rows(workspace)
    removed = do_remove_alias(workspace=workspace, entity_id=google, name="GOOG")
    assert not Alias.objects.filter(entity_id=google).exists()

    do_undo_event(workspace=workspace, event_id=removed.pk)

    assert changes(before, rows(workspace)) == []


def test_undoing_a_rejected_suggestion_lifts_the_rule_and_reopens_it(alice, built):
    workspace, ids = alice.workspace, _ids(built)
    suggestion = _suggestion(workspace, ids["Google"], ids["Alphabet"])
    before = rows(workspace)
    event = do_reject_suggestion(workspace=workspace, suggestion_id=suggestion.pk)
    suggestion.refresh_from_db()
    assert suggestion.status == "rejected"

    do_undo_event(workspace=workspace, event_id=event.pk)

    assert changes(before, rows(workspace)) == []
    suggestion.refresh_from_db()
    assert suggestion.status == "open"


def test_undo_is_refused_naming_the_later_event_that_depends_on_it(alice, built):
    workspace, ids = alice.workspace, _ids(built)
    before = rows(workspace)
    rename = do_rename_entity(workspace=workspace, entity_id=ids["Google"], name="Googol")
    merge = do_merge_entities(
        workspace=workspace, survivor_id=ids["Google"], merged_ids=[ids["Alphabet"]]
    )

    with pytest.raises(Conflict) as refused:
        do_undo_event(workspace=workspace, event_id=rename.pk)

    assert f"event {merge.pk}" in refused.value.message
    assert "Merged 'Alphabet' into 'Googol'" in refused.value.message
    rename.refresh_from_db()
    assert rename.undone_by_id is None
    assert Entity.objects.get(pk=ids["Google"]).name == "Googol"

    # Undo both: the merge first (newest first), then the rename.
    do_undo_event(workspace=workspace, event_id=rename.pk, cascade=True)
    merge.refresh_from_db()
    rename.refresh_from_db()
    assert merge.undone_by_id is not None and rename.undone_by_id is not None
    assert merge.undone_by_id < rename.undone_by_id
    after = rows(workspace)
    # The unmerge remembers the pair as "not the same"; everything else is as it was.
    assert CurationRule.objects.get(event=merge.undone_by, active=True).kind == "not_same"
    assert changes(before, after) == []


def test_a_relation_change_after_a_merge_blocks_the_merge_undo(alice, built):
    workspace, ids = alice.workspace, _ids(built)
    merge = do_merge_entities(
        workspace=workspace, survivor_id=ids["Alphabet"], merged_ids=[ids["Google"]]
    )
    edge = Relation.objects.get(source_id=ids["Larry Page"], state="active")
    retype = do_retype_relation(workspace=workspace, relation_id=edge.pk, type_name="related_to")

    with pytest.raises(Conflict, match=f"event {retype.pk}"):
        do_undo_event(workspace=workspace, event_id=merge.pk)
    # ...and the relation change itself depends on nothing later: it is undone alone.
    do_undo_event(workspace=workspace, event_id=retype.pk)
    do_undo_event(workspace=workspace, event_id=merge.pk)
    assert Entity.objects.get(pk=ids["Google"]).state == "active"


def test_undo_events_are_not_undoable(alice, built):
    workspace, ids = alice.workspace, _ids(built)
    event = do_rename_entity(workspace=workspace, entity_id=ids["Google"], name="Googol")
    undo = do_undo_event(workspace=workspace, event_id=event.pk)

    with pytest.raises(Conflict, match="cannot be undone itself"):
        do_undo_event(workspace=workspace, event_id=undo.pk)
    assert undo.action == CurationAction.RESTORE
    assert undo.payload == {"undid": event.pk}


def test_an_event_recorded_before_its_undo_was_kept_is_refused_plainly(alice, built):
    workspace = alice.workspace
    event = do_add_alias(workspace=workspace, entity_id=built.entities["Google"].pk, name="GOOG")
    event.payload = {"alias": event.payload["alias"], "canonical": event.payload["canonical"]}
    event.save(update_fields=["payload"])

    with pytest.raises(Conflict, match="recorded before its undo was kept"):
        do_undo_event(workspace=workspace, event_id=event.pk)
    assert Alias.objects.filter(entity=built.entities["Google"], name="GOOG").exists()


def test_another_workspaces_event_is_not_found(alice, bob, built):
    event = do_rename_entity(
        workspace=alice.workspace, entity_id=built.entities["Google"].pk, name="Googol"
    )

    with pytest.raises(NotFound):
        do_undo_event(workspace=bob.workspace, event_id=event.pk, actor=bob.user)
    event.refresh_from_db()
    assert event.undone_by_id is None
