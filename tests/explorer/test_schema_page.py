"""The Schema page (explorer/schema_views.py): types with counts and examples, proposed
types with their sample mentions, each control (accept, retire, rename, merge with its
confirmation, domain and range, undo) through Django's test client against graphs written
into the real tables, and the violations list.

Viewers read the page without controls and are refused (403) on every write; another
workspace's type or change id is 404 with nothing done.
"""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from knowledge.actions.curation.types import do_merge_types
from knowledge.actions.schema import do_record_proposed_types, do_set_relation_domain
from knowledge.models import Entity, EntityType, RelationType, TypeStatus
from knowledge.models.schema import TypeChange
from tests.knowledge.graph_data import make_graph
from tests.support import signed_in
from workspaces.models import Role

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


@pytest.fixture
def editor(make_member):
    return make_member("erin", workspace="acme", role=Role.EDITOR)


@pytest.fixture
def viewer(make_member, editor):
    return make_member("vic", workspace="acme", role=Role.VIEWER)


@pytest.fixture
def graph(editor):
    built = make_graph(
        editor.workspace,
        entities={"Ada": "person", "Grace": "person", "Alan": "person", "Edsger": "person",
                  "Acme": "organization", "Widget": "gadget", "Paris": "location"},
        relations=[("Ada", "Acme", "works_for"), ("Grace", "Paris", "works_for")],
    )  # fmt: skip
    # "gadget" came from the model: proposed, asked for three times.
    do_record_proposed_types(workspace=editor.workspace, kind="entity", names=["gadget"])
    EntityType.objects.filter(workspace=editor.workspace, name="gadget").update(
        status=TypeStatus.PROPOSED, proposed_count=3
    )
    for name, mentions in (("Ada", 9), ("Grace", 7), ("Alan", 5), ("Edsger", 1)):
        Entity.objects.filter(pk=built.entities[name].pk).update(mention_count=mentions)
    return built


def url(name: str, *args) -> str:
    return f"{reverse(f'explorer:{name}', args=args)}?ws=acme"


def type_id(ws, kind: str, name: str) -> int:
    model = EntityType if kind == "entity" else RelationType
    return model.objects.get(workspace=ws, name=name).pk


def body(response) -> str:
    return response.content.decode()


def row(html: str, element_id: str) -> str:
    found = re.search(rf'<tr id="{element_id}">(.*?)</tr>', html, re.S)
    assert found, element_id
    return found.group(1)


def test_the_page_lists_types_with_counts_examples_and_proposals(editor, graph):
    html = body(signed_in(editor).get(url("schema")))
    person = row(html, f"entity-type-{type_id(editor.workspace, 'entity', 'person')}")
    assert '<td class="number">4</td>' in person
    # The three most mentioned, linked to the explorer; the type to the entities page.
    assert re.findall(r">(Ada|Grace|Alan|Edsger)</a>", person) == ["Ada", "Grace", "Alan"]
    assert "/entities/?ws=acme&amp;type=person" in person
    works_for = row(html, f"relation-type-{type_id(editor.workspace, 'relation', 'works_for')}")
    assert '<td class="number">2</td>' in works_for and "Ada → Acme" in works_for
    concept = row(html, f"entity-type-{type_id(editor.workspace, 'entity', 'concept')}")
    assert "fallback type" in concept and "<form" not in concept
    proposed = row(html, f"proposed-entity-{type_id(editor.workspace, 'entity', 'gadget')}")
    assert '<td class="number">3</td>' in proposed and "Widget" in proposed


def test_viewers_see_no_controls_and_every_write_is_refused(viewer, graph):
    client = signed_in(viewer)
    html = body(client.get(url("schema")))
    assert "<form" not in html.split('id="schema-body"')[1]
    ws = viewer.workspace
    gadget, works_for = type_id(ws, "entity", "gadget"), type_id(ws, "relation", "works_for")
    change = do_merge_types(workspace=ws, kind="entity", source_name="gadget", into_name="person")
    writes = [
        (url("schema_accept", "entity", gadget), {}),
        (url("schema_retire", "entity", gadget), {}),
        (url("schema_rename", "entity", gadget), {"name": "thing"}),
        (url("schema_merge"), {"kind": "entity", "source": gadget, "into": gadget}),
        (url("schema_domain", works_for), {"domain": ["person"]}),
        (url("schema_undo", change.pk), {}),
    ]
    for target, data in writes:
        assert client.post(target, data, headers=HTMX).status_code == 403, target
    assert TypeChange.objects.filter(workspace=ws).count() == 1
    assert not RelationType.objects.get(pk=works_for).domain.exists()


def test_another_workspaces_ids_are_404_with_nothing_done(editor, bob, graph):
    theirs = make_graph(bob.workspace, entities={"Thing": "widgetry"}, relations=[])
    assert theirs
    foreign = type_id(bob.workspace, "entity", "widgetry")
    foreign_relation = type_id(bob.workspace, "relation", "works_for")
    foreign_change = do_merge_types(
        workspace=bob.workspace, kind="entity", source_name="widgetry", into_name="person"
    )
    mine = type_id(editor.workspace, "entity", "gadget")
    client = signed_in(editor)
    requests = [
        (url("schema_accept", "entity", foreign), {}),
        (url("schema_retire", "entity", foreign), {}),
        (url("schema_rename", "entity", foreign), {"name": "mine_now"}),
        (url("schema_merge"), {"kind": "entity", "source": foreign, "into": mine, "confirm": "1"}),
        (url("schema_merge"), {"kind": "entity", "source": mine, "into": foreign, "confirm": "1"}),
        (url("schema_domain", foreign_relation), {"domain": ["person"]}),
        (url("schema_undo", foreign_change.pk), {}),
    ]
    for target, data in requests:
        assert client.post(target, data, headers=HTMX).status_code == 404, target
    assert client.get(url("schema_violations", foreign_relation)).status_code == 404
    assert EntityType.objects.get(pk=foreign).status == TypeStatus.RETIRED
    assert TypeChange.objects.get(pk=foreign_change.pk).undone_at is None
    assert not TypeChange.objects.filter(workspace=editor.workspace).exists()


def test_accept_retire_and_rename_call_the_actions_and_offer_undo(editor, graph):
    client = signed_in(editor)
    gadget = type_id(editor.workspace, "entity", "gadget")
    html = body(client.post(url("schema_accept", "entity", gadget), headers=HTMX))
    assert "Accepted the entity type gadget." in html
    assert EntityType.objects.get(pk=gadget).status == TypeStatus.ACTIVE
    html = body(
        client.post(url("schema_rename", "entity", gadget), {"name": "Device"}, headers=HTMX)
    )
    assert "Renamed the entity type gadget to device." in html
    rename = TypeChange.objects.get(workspace=editor.workspace, action="rename")
    assert url("schema_undo", rename.pk).split("?")[0] in html
    html = body(client.post(url("schema_retire", "entity", gadget), headers=HTMX))
    assert EntityType.objects.get(pk=gadget).status == TypeStatus.RETIRED

    refused = client.post(
        url("schema_retire", "entity", type_id(editor.workspace, "entity", "concept")), headers=HTMX
    )
    assert refused.status_code == 200 and 'role="alert"' in body(refused)
    assert "fallback" in body(refused)

    # Undo the retire, then the rename: back to an active "gadget".
    for change in TypeChange.objects.filter(
        workspace=editor.workspace, action__in=["retire", "rename"]
    ).order_by("-pk"):
        client.post(url("schema_undo", change.pk), headers=HTMX)
    found = EntityType.objects.get(pk=gadget)
    assert (found.name, found.status) == ("gadget", TypeStatus.ACTIVE)


def test_merging_asks_for_confirmation_then_merges_and_undoes(editor, graph):
    client = signed_in(editor)
    ws = editor.workspace
    gadget, person = type_id(ws, "entity", "gadget"), type_id(ws, "entity", "person")
    widget = graph.entities["Widget"]
    data = {"kind": "entity", "source": gadget, "into": person}
    html = body(client.post(url("schema_merge"), data, headers=HTMX))
    assert "Merge gadget into person?" in html and 'name="confirm" value="1"' in html
    assert Entity.objects.get(pk=widget.pk).type_id == gadget

    html = body(client.post(url("schema_merge"), {**data, "confirm": "1"}, headers=HTMX))
    assert "Merged gadget into person: 1 retyped" in html
    assert Entity.objects.get(pk=widget.pk).type_id == person
    merge = TypeChange.objects.get(workspace=ws, action="merge")

    plain = client.post(url("schema_undo", merge.pk))  # without htmx: back to the page
    assert plain.status_code == 302 and plain["Location"] == url("schema")
    assert Entity.objects.get(pk=widget.pk).type_id == gadget
    assert EntityType.objects.get(pk=gadget).status == TypeStatus.PROPOSED


def test_domain_and_range_are_edited_and_violations_listed(editor, graph):
    client = signed_in(editor)
    works_for = type_id(editor.workspace, "relation", "works_for")
    html = body(
        client.post(
            url("schema_domain", works_for), {"domain": ["person"], "range": ["organization"]},
            headers=HTMX,
        )
    )  # fmt: skip
    assert "Saved the domain and range of works_for." in html
    works_row = row(html, f"relation-type-{works_for}")
    assert "person → organization" in works_row
    assert f'href="{url("schema_violations", works_for)}">1</a>' in works_row.replace("&amp;", "&")
    listing = body(client.get(url("schema_violations", works_for))).split('id="violations"')[1]
    assert "Grace" in listing and "Paris" in listing and ">Ada<" not in listing

    refused = client.post(url("schema_domain", works_for), {"domain": ["nope"]}, headers=HTMX)
    assert 'role="alert"' in body(refused)
    assert [t.name for t in RelationType.objects.get(pk=works_for).domain.all()] == ["person"]


def test_the_violations_list_is_paginated(editor, graph):
    ws = editor.workspace
    people = {f"Person {i:02d}": "person" for i in range(25)}
    make_graph(
        ws, entities={**people, "Elsewhere": "location"}, path="many.txt",
        relations=[(name, "Elsewhere", "works_for") for name in people],
    )  # fmt: skip
    do_set_relation_domain(workspace=ws, name="works_for", domain=[], range=["organization"])
    client = signed_in(editor)
    works_for = type_id(ws, "relation", "works_for")
    first = body(client.get(url("schema_violations", works_for)))
    assert first.count('<tr id="violation-') == 20 and 'rel="next"' in first
    second = body(client.get(url("schema_violations", works_for), {"offset": 20}))
    # 25 new ones and Grace → Paris.
    assert second.count('<tr id="violation-') == 6 and 'rel="next"' not in second


def test_hundreds_of_proposed_types_are_listed_once_the_most_asked_for_first(editor, graph):
    names = [f"header_{n:03d}" for n in range(55)]
    do_record_proposed_types(workspace=editor.workspace, kind="relation", names=names)
    for n, name in enumerate(names):
        RelationType.objects.filter(workspace=editor.workspace, name=name).update(
            status=TypeStatus.PROPOSED, proposed_count=n + 1
        )
    html = body(signed_in(editor).get(url("schema")))
    relation_table = html.split('id="relation-types"', 1)[1].split("</table>", 1)[0]
    assert "header_" not in relation_table  # proposed ones have their own list
    proposed = html.split('id="proposed-types"', 1)[1].split("</table>", 1)[0]
    assert "header_054" in proposed and "header_006" in proposed
    assert "header_000" not in proposed  # the least asked-for are only counted
    assert "6 more proposed types" in html  # 55 of ours and the graph's "gadget", 50 shown
