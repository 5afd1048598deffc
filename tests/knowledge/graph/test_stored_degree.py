"""Entity.degree is kept by PostgreSQL (migration 0013): whatever writes relations — the
extraction write path, every curation action, bulk ORM statements, source deletion — the
stored degree equals the active relations counted from the tables, and nothing else can
write it."""

from __future__ import annotations

import pytest
from django.db import connection

from ingest.actions.sources import do_delete_source
from knowledge.actions.curation.entities import (
    do_delete_entity,
    do_restore_entity,
    do_split_entity,
)
from knowledge.actions.curation.merge import do_merge_entities, do_unmerge
from knowledge.actions.extraction.documents import do_extract_source
from knowledge.models import Entity, Mention, Relation, RelationType
from tests.knowledge.actions.curation.curation_data import FIRST, SECOND, WORLD
from tests.knowledge.graph_data import make_graph

COUNTED = """
SELECT e.id,
       (SELECT count(*) FROM knowledge_relation AS r
        WHERE r.source_id = e.id AND r.state = 'active')
     + (SELECT count(*) FROM knowledge_relation AS r
        WHERE r.target_id = e.id AND r.state = 'active' AND r.source_id <> e.id)
FROM knowledge_entity AS e
ORDER BY e.id
"""


def counted() -> dict[int, int]:
    with connection.cursor() as cursor:
        cursor.execute(COUNTED)
        return dict(cursor.fetchall())


def stored() -> dict[int, int]:
    return dict(Entity.objects.order_by("pk").values_list("pk", "degree"))


def assert_degrees_exact() -> None:
    expected = counted()
    assert stored() == expected
    assert any(expected.values()), "a fixture with no relations proves nothing"


def test_the_degree_follows_extraction_and_every_curation_action(llm, ingest_text, alice):
    llm.responder = WORLD
    ws = alice.workspace
    source = ingest_text(FIRST)
    assert_degrees_exact()
    google = Entity.objects.get(name="Google")
    alphabet = Entity.objects.get(name="Alphabet")
    assert google.degree == 4  # Larry, Alphabet, Sergey, Mountain View

    # A merge re-points edges, folds the Google -> Alphabet edge into a self-loop and the
    # duplicate works_for / located_in edges into the survivor's.
    event = do_merge_entities(workspace=ws, survivor_id=alphabet.pk, merged_ids=[google.pk])
    assert_degrees_exact()
    assert Entity.objects.get(pk=google.pk).degree == 0
    do_unmerge(workspace=ws, event_id=event.pk)
    assert_degrees_exact()
    assert Entity.objects.get(pk=google.pk).degree == 4

    brin = Entity.objects.get(name="Sergey Brin")
    do_delete_entity(workspace=ws, entity_id=brin.pk)
    assert_degrees_exact()
    assert Entity.objects.get(pk=google.pk).degree == 3
    do_restore_entity(workspace=ws, entity_id=brin.pk)
    assert_degrees_exact()

    moved = list(Mention.objects.filter(entity=google).values_list("pk", flat=True)[:1])
    do_split_entity(
        workspace=ws, entity_id=google.pk, mention_ids=moved, name="Google Search",
        type_name="product",
    )  # fmt: skip
    assert_degrees_exact()

    do_extract_source(source=source, force=True)
    second = ingest_text(SECOND, title="second")
    assert_degrees_exact()
    do_delete_source(source_id=second.pk)
    assert_degrees_exact()


def test_bulk_statements_keep_degrees_exact_with_self_loops_and_parallel_edges(alice):
    built = make_graph(
        alice.workspace,
        entities={"Hub": "concept", "A": "concept", "B": "concept", "C": "concept"},
        relations=[
            ("Hub", "A", "related_to"),
            ("A", "Hub", "uses"),  # parallel, opposite direction: counts twice
            ("Hub", "Hub", "related_to"),  # a self-loop counts once
            ("B", "Hub", "related_to"),
        ],
    )
    hub, a, b, c = (built.entities[n] for n in ("Hub", "A", "B", "C"))
    assert_degrees_exact()
    assert Entity.objects.get(pk=hub.pk).degree == 4

    kind = RelationType.objects.get(workspace=alice.workspace, name="part_of")
    Relation.objects.bulk_create(
        Relation(workspace=alice.workspace, source=x, target=y, type=kind)
        for x, y in [(c, hub), (c, a), (b, b), (c, b)]
    )
    assert_degrees_exact()

    Relation.objects.filter(source=c).update(state="deleted")  # no longer counted
    assert_degrees_exact()
    Relation.objects.filter(source=c).exclude(target=a).update(state="active")  # back
    Relation.objects.filter(source=c, target=a).update(state="active", target=c)  # re-pointed
    assert_degrees_exact()
    Relation.objects.filter(target=hub).update(weight=0.5)  # no endpoint change
    assert_degrees_exact()
    Relation.objects.filter(source=hub).delete()
    assert_degrees_exact()
    assert Entity.objects.get(pk=hub.pk).degree == 3  # A -> Hub, B -> Hub, C -> Hub


def test_a_stale_instance_or_a_direct_write_cannot_change_the_degree(alice):
    built = make_graph(
        alice.workspace,
        entities={"Hub": "concept", "A": "concept", "B": "concept"},
        relations=[("Hub", "A", "related_to")],
    )
    stale = Entity.objects.get(pk=built.entities["Hub"].pk)
    assert stale.degree == 1
    kind = RelationType.objects.get(workspace=alice.workspace, name="uses")
    Relation.objects.create(
        workspace=alice.workspace, source=built.entities["B"], target=stale, type=kind
    )

    stale.description = "edited by a person who read the row before the new edge"
    stale.save()  # writes degree = 1 from memory
    Entity.objects.filter(pk=stale.pk).update(degree=999)

    fresh = Entity.objects.get(pk=stale.pk)
    assert fresh.description.startswith("edited")
    assert fresh.degree == 2
    assert_degrees_exact()


@pytest.mark.parametrize("degree", [0, 7])
def test_a_new_entity_starts_at_zero_whatever_it_is_given(alice, degree):
    built = make_graph(alice.workspace, entities={"A": "concept"})
    copy = Entity.objects.create(
        workspace=alice.workspace,
        name="Copy",
        canonical_name="copy",
        type=built.entities["A"].type,
        degree=degree,
    )
    copy.refresh_from_db()
    assert copy.degree == 0
